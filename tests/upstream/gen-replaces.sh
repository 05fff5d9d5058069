#!/bin/sh
# gen-replaces.sh: k8s.io/kubernetes requires each of its staging modules at v0.0.0 and points
# them at ./staging with replace directives, which a consumer module cannot follow. This script
# reads that go.mod from the module cache and replaces every staging module it lists with the
# published release of the same minor (v1.37.2 -> v0.37.2), then tidies.
#
#   tests/upstream/gen-replaces.sh            # after changing KUBE_VERSION below
set -eu
KUBE_VERSION=v1.37.2
STAGING_VERSION=v0$(echo "$KUBE_VERSION" | sed 's/^v1//')
cd "$(dirname "$0")"
dir=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] || { echo "gen-replaces.sh: cannot download k8s.io/kubernetes@$KUBE_VERSION" >&2; exit 1; }
modules=$(sed -n 's|^[[:space:]]*\(k8s.io/[a-z0-9.-]*\) => ./staging/.*|\1|p' "$dir/go.mod")
[ -n "$modules" ] || { echo "gen-replaces.sh: no staging replaces in $dir/go.mod" >&2; exit 1; }
go mod edit -require="k8s.io/kubernetes@$KUBE_VERSION"
for m in $modules; do
  go mod edit -replace="$m=$m@$STAGING_VERSION"
done
go mod tidy
