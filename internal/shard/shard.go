// Package shard partitions work (scenarios, crash points) stably across
// machines: --shard K/N on run, explore and selfcheck.
package shard

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is one part of a stable partition: K of N (1-based). A key (a
// scenario id, or a scenario id and a crash point) belongs to exactly one
// shard, the same on every machine and in every run, so N CI jobs cover
// everything once. The zero Shard is the whole.
type Shard struct{ K, N int }

// Parse reads "K/N".
func Parse(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	ks, ns, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(ks)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 1 || k > n {
		return Shard{}, fmt.Errorf("--shard %q: write K/N with 1 <= K <= N, e.g. 2/3", s)
	}
	return Shard{K: k, N: n}, nil
}

// Has reports whether key belongs to this shard.
func (s Shard) Has(key string) bool {
	if s.N <= 1 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32()%uint32(s.N)) == s.K-1
}

// String writes the shard as Parse reads it ("" for the whole).
func (s Shard) String() string {
	if s.N <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}
