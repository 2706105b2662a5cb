package store

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBlobKey(t *testing.T) {
	hexKey := "00ff" + string(bytes.Repeat([]byte("ab"), 30))
	want := append([]byte{0x00, 0xff}, bytes.Repeat([]byte{0xab}, 30)...)
	tests := map[string]struct {
		sha  string
		want []byte
	}{
		"lowercase hex sha256": {hexKey, want},
		"uppercase hex":        {"00FF" + hexKey[4:], []byte("00FF" + hexKey[4:])},
		"63 hex digits":        {hexKey[:63], []byte(hexKey[:63])},
		"65 hex digits":        {hexKey + "0", []byte(hexKey + "0")},
		"not hex":              {"snapshot-1", []byte("snapshot-1")},
		"uppercase inside":     {hexKey[:31] + "A" + hexKey[32:], []byte(hexKey[:31] + "A" + hexKey[32:])},
		"g at the end":         {hexKey[:63] + "g", []byte(hexKey[:63] + "g")},
		"a byte past f":        {"`" + hexKey[1:], []byte("`" + hexKey[1:])},
		"every digit":          {"0123456789abcdef" + hexKey[16:], append([]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}, want[8:]...)},
		"empty":                {"", []byte{}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := blobKey(tt.sha); !bytes.Equal(got, tt.want) || got == nil {
				t.Errorf("blobKey(%q) = %x (nil %v), want %x", tt.sha, got, got == nil, tt.want)
			}
			if got := appendBlobKey([]byte("pre"), tt.sha); !bytes.Equal(got, append([]byte("pre"), tt.want...)) {
				t.Errorf("appendBlobKey(pre, %q) = %x, want pre then %x", tt.sha, got, tt.want)
			}
		})
	}
}

// TestBlobKeysMigration: blobs stored before migration 011_blob_keys,
// under their hex sha256 (and one under a key that is not hex), read back
// the same after it through every read path, and storing them again adds
// nothing.
func TestBlobKeysMigration(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t, b.open(t))
			migrateOnlyTo(ctx, t, s, 10)
			raws := [][]byte{[]byte(`{"type":"done"}`), bytes.Repeat([]byte("trace line\n"), 50), []byte(`{"metrics":1}`)}
			var blobs []Blob
			for _, raw := range raws {
				blobs = append(blobs, gzipBlob(t, BlobTrace, raw))
			}
			odd := Blob{SHA256: "not-a-sha256", Kind: BlobMetrics, Encoding: EncodingIdentity, Size: 3, Data: []byte("odd")}
			blobs = append(blobs, odd)
			for _, bl := range blobs { // as the store wrote them before 011: the key as text
				enc := bl.Encoding
				if enc == "" {
					enc = EncodingGzip
				}
				if _, err := s.db.ExecContext(ctx, s.Rebind(`INSERT INTO company_eval_blobs (sha256, kind, encoding, size, data, created_at)
					VALUES (?, ?, ?, ?, ?, ?)`), bl.SHA256, bl.Kind, enc, bl.Size, bl.Data, s.now()); err != nil {
					t.Fatalf("insert blob before 011: %v", err)
				}
			}
			if err := s.migrate(ctx, nil); err != nil {
				t.Fatalf("migrate() = %v", err)
			}
			want := map[string][]byte{odd.SHA256: []byte("odd")}
			var shas []string
			for i, raw := range raws {
				want[blobs[i].SHA256] = raw
				shas = append(shas, blobs[i].SHA256)
			}
			shas = append(shas, odd.SHA256, "ffff"+blobs[0].SHA256[4:]) // the last is not stored
			for sha, raw := range want {
				got, err := s.ReadBlob(ctx, sha)
				if err != nil || !bytes.Equal(got, raw) {
					t.Errorf("ReadBlob(%s) after 011 = %q, %v, want %q", sha, got, err, raw)
				}
			}
			got, err := s.ReadBlobs(ctx, shas)
			if err != nil {
				t.Fatalf("ReadBlobs() after 011 = %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ReadBlobs() after 011 (-want +got):\n%s", diff)
			}
			before, err := s.EvidenceStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.PutBlobs(ctx, blobs); err != nil {
				t.Fatalf("PutBlobs(stored before 011) = %v", err)
			}
			fresh := gzipBlob(t, BlobTrace, []byte("new after 011"))
			if err := s.PutBlobs(ctx, []Blob{fresh}); err != nil {
				t.Fatalf("PutBlobs(new) = %v", err)
			}
			after, err := s.EvidenceStats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if after.Blobs != before.Blobs+1 || before.Blobs != int64(len(blobs)) {
				t.Errorf("EvidenceStats().Blobs = %d before storing them again, %d after and one new, want %d and %d",
					before.Blobs, after.Blobs, len(blobs), len(blobs)+1)
			}
			if got, err := s.ReadBlob(ctx, fresh.SHA256); err != nil || string(got) != "new after 011" {
				t.Errorf("ReadBlob(new) = %q, %v, want it", got, err)
			}
			var keyLen int
			if err := s.db.QueryRowContext(ctx, s.Rebind(`SELECT length(sha256) FROM company_eval_blobs WHERE kind = ? AND size = ?`),
				BlobTrace, int64(len(raws[1]))).Scan(&keyLen); err != nil || keyLen != 32 {
				t.Errorf("stored key of a blob stored before 011 = %d bytes, %v, want 32", keyLen, err)
			}
		})
	}
}

// TestUpgradeNotice: opening a database that lacks migrations names them
// to the notice before applying them, once; creating a database and
// opening an up-to-date one give no notice.
func TestUpgradeNotice(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := b.open(t)
			var got [][]string
			open := func() {
				s, err := Open(ctx, dsn, WithUpgradeNotice(func(ms []string) { got = append(got, ms) }))
				if err != nil {
					t.Fatalf("Open() = %v", err)
				}
				s.Close()
			}
			open() // created: not an upgrade
			if got != nil {
				t.Fatalf("creating the database noticed %v", got)
			}
			s := openStore(t, dsn)
			migrateOnlyTo(ctx, t, s, 10)
			s.Close()
			open()
			open() // up to date
			ms, err := migrations(s.dialect)
			if err != nil {
				t.Fatal(err)
			}
			var after10 []string // 011_blob_keys.sql and any later
			for _, m := range ms {
				if m.version > 10 {
					after10 = append(after10, m.name)
				}
			}
			if want := [][]string{after10}; !cmp.Equal(got, want) {
				t.Errorf("notices = %v, want %v", got, want)
			}
		})
	}
}
