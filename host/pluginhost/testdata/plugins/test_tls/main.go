// Command test_tls announces a Unix socket in its socket directory with a
// TLS certificate, as a plugin that always serves TLS would although the
// host offered none: the host must refuse it with a message, not crash.
package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	cert := base64.RawStdEncoding.EncodeToString([]byte(strings.Repeat("not a certificate ", 8)))
	fmt.Printf("1|1|unix|%s|grpc|%s\n", filepath.Join(os.Getenv("PLUGIN_UNIX_SOCKET_DIR"), "plugin1"), cert)
	time.Sleep(time.Minute)
}
