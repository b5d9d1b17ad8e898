// Package routing holds the coordinator's producer-routing arithmetic: the
// stream key of a shard, its Redis Cluster slot, and routeV1, the hash that
// producers use to pick a shard for a partition key. It must stay bit-exact
// with the coordinator's JVM and Python producers.
package routing

import (
	"errors"
	"strconv"
	"strings"
)

// ShardIndexPlaceholder is the literal token in a stream key pattern.
const ShardIndexPlaceholder = "{shardIndex}"

// StreamKey is the Redis key of one shard: "<prefix>:<index>", decimal, no
// padding, no hash tag.
func StreamKey(prefix string, shardIndex int) string {
	return prefix + ":" + strconv.Itoa(shardIndex)
}

// StreamKeyPattern is the pattern the coordinator reports in producer routing.
func StreamKeyPattern(prefix string) string {
	return prefix + ":" + ShardIndexPlaceholder
}

// Slot is the Redis Cluster slot of key: CRC16/XMODEM of the hashed part,
// masked to 14 bits. Only the text between the first '{' and the next '}' is
// hashed when that text is non-empty (the hash-tag rule).
func Slot(key string) int {
	return int(CRC16([]byte(hashTagPart(key))) & 16383)
}

func hashTagPart(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	closeRel := strings.IndexByte(key[open+1:], '}')
	if closeRel <= 0 { // no closing brace, or "{}": hash the whole key
		return key
	}
	return key[open+1 : open+1+closeRel]
}

// CRC16 is CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection,
// no final XOR.
func CRC16(data []byte) uint16 {
	var crc uint16
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// ErrNoRoute is returned for a shard count below 1: a group drained to zero
// shards has no route, and producers refuse to publish.
var ErrNoRoute = errors.New("shard count must be at least 1: a group with 0 shards has no route")

// ShardForKey is routeV1: the shard index a producer writes partitionKey to
// when the group has shardCount shards. It rejects hash values at or above the
// largest multiple of shardCount below 2^32 and re-hashes with a new seed, so
// every shard is equally likely.
func ShardForKey(partitionKey string, shardCount int64) (int64, error) {
	if shardCount < 1 {
		return 0, ErrNoRoute
	}
	if shardCount > 1<<32 {
		return 0, errors.New("shard count must be at most 4294967296")
	}
	n := uint64(shardCount)
	limit := uint64(1)<<32 - (uint64(1)<<32)%n
	key := []byte(partitionKey)
	for attempt := uint32(0); ; attempt++ {
		var seed uint32
		if attempt > 0 {
			var le [4]byte
			le[0], le[1], le[2], le[3] = byte(attempt), byte(attempt>>8), byte(attempt>>16), byte(attempt>>24)
			seed = Murmur3(le[:], 0)
		}
		h := uint64(Murmur3(key, seed))
		if h < limit {
			return int64(h % n), nil
		}
	}
}

// Murmur3 is MurmurHash3 x86_32.
func Murmur3(data []byte, seed uint32) uint32 {
	const (
		c1 = 0xcc9e2d51
		c2 = 0x1b873593
	)
	h := seed
	nblocks := len(data) / 4
	for i := range nblocks {
		b := data[i*4:]
		k := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		k *= c1
		k = k<<15 | k>>17
		k *= c2
		h ^= k
		h = h<<13 | h>>19
		h = h*5 + 0xe6546b64
	}
	tail := data[nblocks*4:]
	var k uint32
	switch len(tail) {
	case 3:
		k ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(tail[0])
		k *= c1
		k = k<<15 | k>>17
		k *= c2
		h ^= k
	}
	h ^= uint32(len(data))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
