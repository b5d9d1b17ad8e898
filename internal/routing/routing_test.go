package routing

import (
	"encoding/binary"
	"math/bits"
	"testing"
)

func TestSlotContractExamples(t *testing.T) {
	for key, want := range map[string]int{
		"foo": 12182, "orders:0": 8578, "orders:1": 12707, "orders:5": 12583, "create-order:4": 9068,
		// hash-tag rule: only "user" is hashed in both keys, so they share a slot.
		"{user}.following": Slot("user"), "{user}.followers": Slot("user"),
		// an empty tag hashes the whole key.
		"foo{}{bar}": int(CRC16([]byte("foo{}{bar}")) & 16383),
	} {
		if got := Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
	if got := CRC16([]byte("123456789")); got != 0x31C3 {
		t.Errorf("CRC16(123456789) = %#x, want 0x31c3", got)
	}
}

func TestMurmur3ContractExamples(t *testing.T) {
	cases := []struct {
		in   string
		seed uint32
		want uint32
	}{
		{"", 0, 0},
		{"hello", 0, 613153351},
		{"order-123", 0, 2913866941},
		{"customer-42", 0, 220234549},
		{"user:alice", 0, 1500882790},
		{"order-0", 0, 3415623120},
		{"order-0", 4226891818, 2784531674},
	}
	for _, c := range cases {
		if got := Murmur3([]byte(c.in), c.seed); got != c.want {
			t.Errorf("Murmur3(%q, %d) = %d, want %d", c.in, c.seed, got, c.want)
		}
	}
	// The re-seed for attempt 1 is murmur3(le32(1), 0).
	if got := Murmur3([]byte{1, 0, 0, 0}, 0); got != 4226891818 {
		t.Errorf("seed for attempt 1 = %d, want 4226891818", got)
	}
}

func TestShardForKeyContractExamples(t *testing.T) {
	cases := []struct {
		key  string
		n    int64
		want int64
	}{
		{"order-123", 8, 5},
		{"customer-42", 12, 1},
		{"user:alice", 20, 10},
		{"order-123", 10, 1},
		{"order-0", 1500000000, 1284531674}, // exercises the re-seed path
	}
	for _, c := range cases {
		got, err := ShardForKey(c.key, c.n)
		if err != nil || got != c.want {
			t.Errorf("ShardForKey(%q, %d) = %d, %v; want %d", c.key, c.n, got, err, c.want)
		}
	}
	if _, err := ShardForKey("k", 0); err == nil {
		t.Error("ShardForKey with 0 shards: want an error")
	}
	if StreamKey("orders", 5) != "orders:5" || StreamKeyPattern("orders") != "orders:{shardIndex}" {
		t.Error("stream key formatting")
	}
}

// referenceMurmur3 is a deliberately different formulation (binary package,
// bits.RotateLeft32, a generic tail loop) to cross-check Murmur3 under fuzzing.
func referenceMurmur3(data []byte, seed uint32) uint32 {
	h := seed
	i := 0
	for ; i+4 <= len(data); i += 4 {
		k := binary.LittleEndian.Uint32(data[i:])
		k = bits.RotateLeft32(k*0xcc9e2d51, 15) * 0x1b873593
		h = bits.RotateLeft32(h^k, 13)*5 + 0xe6546b64
	}
	if rest := data[i:]; len(rest) > 0 {
		var k uint32
		for j := len(rest) - 1; j >= 0; j-- {
			k = k<<8 | uint32(rest[j])
		}
		h ^= bits.RotateLeft32(k*0xcc9e2d51, 15) * 0x1b873593
	}
	h ^= uint32(len(data))
	for _, step := range []struct {
		shift uint
		mul   uint32
	}{{16, 0x85ebca6b}, {13, 0xc2b2ae35}} {
		h ^= h >> step.shift
		h *= step.mul
	}
	return h ^ h>>16
}

func referenceRoute(key []byte, n uint64) uint64 {
	limit := (1 << 32) - (1<<32)%n
	for attempt := uint32(0); ; attempt++ {
		seed := uint32(0)
		if attempt > 0 {
			seed = referenceMurmur3(binary.LittleEndian.AppendUint32(nil, attempt), 0)
		}
		if h := uint64(referenceMurmur3(key, seed)); h < limit {
			return h % n
		}
	}
}

func FuzzShardForKey(f *testing.F) {
	f.Add("order-123", int64(8))
	f.Add("order-0", int64(1500000000))
	f.Add("", int64(1))
	f.Add("ünïcödé-κλειδί", int64(4294967295))
	f.Fuzz(func(t *testing.T, key string, n int64) {
		got, err := ShardForKey(key, n)
		if n < 1 || n > 1<<32 {
			if err == nil {
				t.Fatalf("ShardForKey(%q, %d): want an error", key, n)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := referenceRoute([]byte(key), uint64(n)); uint64(got) != want {
			t.Fatalf("ShardForKey(%q, %d) = %d, reference %d", key, n, got, want)
		}
	})
}

func FuzzSlot(f *testing.F) {
	f.Add("orders:0")
	f.Add("{a}b")
	f.Fuzz(func(t *testing.T, key string) {
		if s := Slot(key); s < 0 || s > 16383 {
			t.Fatalf("Slot(%q) = %d out of range", key, s)
		}
	})
}
