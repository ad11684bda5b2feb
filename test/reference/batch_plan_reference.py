"""An independent Python implementation of mtbert's batch plans
(src/data/batching.cpp, src/core/portable_random.cpp), written from the
definitions rather than from the C++: std::mt19937_64 from the C++ standard's
parameters, SplitMix64 seeding, Fisher-Yates with rejection-sampled draws,
and length bucketing in pools."""

MASK64 = (1 << 64) - 1


class MT19937_64:
    """std::mt19937_64: w=64, n=312, m=156, r=31, a=0xB5026F5AA96619E9,
    u=29, d=0x5555555555555555, s=17, b=0x71D67FFFEDA60000, t=37,
    c=0xFFF7EEE000000000, l=43, f=6364136223846793005."""

    def __init__(self, seed=5489):
        self.state = [seed & MASK64]
        for i in range(1, 312):
            prev = self.state[-1]
            self.state.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & MASK64)
        self.index = 312

    def __call__(self):
        if self.index >= 312:
            for k in range(312):
                y = (self.state[k] & 0xFFFFFFFF80000000) | (self.state[(k + 1) % 312] & 0x7FFFFFFF)
                self.state[k] = self.state[(k + 156) % 312] ^ (y >> 1) ^ (0xB5026F5AA96619E9 if y & 1 else 0)
            self.index = 0
        y = self.state[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & MASK64


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def seeded_generator(seed, stream):
    return MT19937_64(splitmix64(splitmix64(seed) ^ stream))


def uniform_below(rng, n):
    threshold = ((1 << 64) - n) % n
    while True:
        x = rng()
        if x >= threshold:
            return x % n


def shuffle(items, rng):
    for i in range(len(items), 1, -1):
        j = uniform_below(rng, i)
        items[i - 1], items[j] = items[j], items[i - 1]


def plan_batches(lengths, batch_size, seed, pass_, bucket_pool_batches=0):
    """Shuffled batches of example positions; bucketed when
    bucket_pool_batches > 0 (Python's sort is stable, as the C++ one)."""
    rng = seeded_generator(seed, pass_)
    order = list(range(len(lengths)))
    shuffle(order, rng)
    if not bucket_pool_batches:
        return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    pool = batch_size * bucket_pool_batches
    batches = []
    for begin in range(0, len(order), pool):
        part = sorted(order[begin:begin + pool], key=lambda i: lengths[i])
        batches += [part[i:i + batch_size] for i in range(0, len(part), batch_size)]
    shuffle(batches, rng)
    return batches
