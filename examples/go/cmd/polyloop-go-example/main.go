// Command polyloop-go-example speaks polyloop-conform's stdio protocol
// for the example kernel:
//
//	go build -o kernel ./cmd/polyloop-go-example
//	polyloop-conform run --impl ./kernel
package main

import (
	"example.com/polyloop-kernel/kernel"
	"github.com/polyloop/polyloop-conform/polyloopkit"
)

func main() { polyloopkit.Main(kernel.New()) }
