// Command etcd is upstream's etcd server: the same entry point as etcd's own main package,
// built from go.etcd.io/etcd/server/v3 at the version go.mod pins.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
