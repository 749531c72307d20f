#!/bin/sh
# Copies the generated CRDs (deploy/crds, one file per kind) into the chart's
# crds/ directory. Helm installs crds/ before the templates and never deletes
# or upgrades them, which is what we want for CRDs (see docs/install.md).
# Run after regenerating deploy/crds; tests/unit/deploy checks the copy is current.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src="$here/../../deploy/crds"
dst="$here/crds"
mkdir -p "$dst"
find "$dst" -maxdepth 1 -name '*.yaml' -type f -exec rm -f {} +
found=0
for f in "$src"/*.yaml; do
  [ -e "$f" ] || continue
  cp "$f" "$dst/"
  found=$((found + 1))
done
echo "copied $found CRD file(s) from deploy/crds to charts/mo-operator/crds"
