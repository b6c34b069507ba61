package shard

import (
	"fmt"
	"testing"
)

func TestShardsPartition(t *testing.T) {
	const n = 3
	var shards []Shard
	for k := 1; k <= n; k++ {
		s, err := Parse(fmt.Sprintf("%d/%d", k, n))
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, s)
	}
	sizes := make([]int, n)
	for i := range 1000 {
		key := fmt.Sprintf("scenario.%d after:action_intent:step%d", i, i%7)
		owners := 0
		for k, s := range shards {
			if s.Has(key) {
				owners++
				sizes[k]++
			}
		}
		if owners != 1 {
			t.Fatalf("%q belongs to %d shards, want exactly 1", key, owners)
		}
		if !(Shard{}).Has(key) {
			t.Fatal("the zero shard must hold everything")
		}
	}
	for k, size := range sizes {
		if size < 250 {
			t.Errorf("shard %d/%d holds %d of 1000 keys; the partition is lopsided", k+1, n, size)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, bad := range []string{"0/3", "4/3", "1/0", "a/b", "2", "1/3/4", "-1/2"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if s, err := Parse("2/5"); err != nil || s.String() != "2/5" {
		t.Errorf("Parse(2/5) = %v, %v", s, err)
	}
}
