package fuzz

import "math/bits"

// rng is SplitMix64: small, fast, and fully specified here, so a seed gives
// the same stream on every Go release and platform (math/rand's streams are
// not promised to stay put).
type rng struct{ s uint64 }

func newRNG(seed uint64) *rng { return &rng{s: seed} }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a uniform int in [0, n); n must be > 0.
func (r *rng) intn(n int) int {
	if n <= 1 {
		return 0
	}
	// Lemire's multiply-shift, with rejection for exact uniformity.
	bound := uint64(n)
	for {
		x := r.next()
		hi, lo := bits.Mul64(x, bound)
		if lo >= bound || lo >= -bound%bound {
			return int(hi)
		}
	}
}

// chance reports true with probability num/den.
func (r *rng) chance(num, den int) bool { return r.intn(den) < num }

// between returns a uniform int in [lo, hi] (hi ≥ lo).
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// fork derives an independent stream, so one part of a value can be
// regenerated without shifting the draws of the rest.
func (r *rng) fork() *rng { return newRNG(r.next()) }

// mix derives the seed of value number i of a stream seeded with seed.
func mix(seed, i uint64) uint64 {
	r := rng{s: seed ^ (i * 0xd1342543de82ef95)}
	return r.next()
}
