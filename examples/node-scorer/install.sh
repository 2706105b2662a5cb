#!/bin/sh
# install.sh PLUGIN_DIR writes PLUGIN_DIR/assay-scorer-node_keywords, a
# launcher for scorer.js. assay runs only plain files inside its plugin
# directory (docs/plugins.md, "Confinement"), and a script that loads its
# node_modules and the .proto relative to itself cannot live there, so the
# launcher names this checkout's scorer.js by absolute path and refuses to
# run it unless the file still has the sha256 it had at install time: the
# launcher's registered sha256 then pins the script too.
set -eu
[ $# -eq 1 ] || { echo "usage: install.sh PLUGIN_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
sum=$(sha256sum "$here/scorer.js" | cut -d' ' -f1)
mkdir -p "$1"
dest="$1/assay-scorer-node_keywords"
cat > "$dest" <<EOF
#!/bin/sh
# Launcher for the Node.js scorer in $here (written by install.sh).
echo "$sum  $here/scorer.js" | sha256sum -c --status || { echo "assay-scorer-node_keywords: $here/scorer.js changed since install.sh; run it again and re-register" >&2; exit 1; }
exec node "$here/scorer.js"
EOF
chmod 755 "$dest"
echo "$dest"
