"""Many seeded streams at the cost of a few: the generators of a block of streams.

A replicate's draws come from its stream ``stream(root, *key, s)``: a
``Generator(PCG64(SeedSequence(root.entropy, spawn_key=root.spawn_key + key
+ (s,))))``. Building one costs about 50 us (the SeedSequence hash, PCG64's
set-up and numpy's ``errstate`` around them), which at B = 10,000 (157
streams of 64) is more than the draws of a small table. :func:`streams`
gives the same generators, bit for bit, for a run of consecutive ``s``: the
part of the SeedSequence hash that the streams share is computed once, the
part that depends on ``s`` for all of them at once (numpy arrays), and one
Generator is re-seeded per stream by setting its PCG64 state.

The hash is numpy's SeedSequence (``numpy/random/bit_generator.pyx``, stable
since numpy 1.17 as part of its reproducibility promise) and PCG64's seeding
(``pcg64_set_seed``). Both are checked once per process against numpy itself
(:func:`_agrees`); if they ever disagree, every stream is built the slow way.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

__all__ = ["seed_sequence", "stream_states", "streams"]

_M32 = 0xFFFFFFFF
_M128 = (1 << 128) - 1
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_PCG_MULT = (2549297995355413924 << 64) + 4865540595714422341
_POOL = 4


def _words(x) -> list[int]:
    """``x`` (an int or a sequence of them) as little-endian 32-bit words, as
    numpy's ``_coerce_to_uint32_array`` gives them (0 is one word)."""
    if isinstance(x, (tuple, list)):
        return [w for v in x for w in _words(v)]
    x = int(x)
    if x < 0:
        raise ValueError("negative seed words")
    out = [x & _M32]
    x >>= 32
    while x:
        out.append(x & _M32)
        x >>= 32
    return out


class _Hash:
    """SeedSequence's ``hashmix`` with its running constant (scalar or array)."""

    def __init__(self):
        self.const = _INIT_A

    def __call__(self, value):
        value = (value ^ self.const) & _M32
        self.const = (self.const * _MULT_A) & _M32
        value = (value * self.const) & _M32
        return value ^ (value >> 16)


def _mix(x, y):
    result = (_MIX_L * x - _MIX_R * y) & _M32
    return result ^ (result >> 16)


def stream_states(root: np.random.SeedSequence, key: tuple, first: int, n: int):
    """PCG64 states of the streams ``key + (first + s,)``, ``s = 0 .. n - 1``.

    Each is the ``bit_generator.state`` of
    ``PCG64(SeedSequence(root.entropy, spawn_key=root.spawn_key + key + (first
    + s,)))``. Needs ``first + n <= 2**32`` (one word per stream number) and
    the default pool size.
    """
    if root.pool_size != _POOL or first < 0 or first + n > 2**32:
        raise ValueError("stream_states: outside the fast path")
    run = _words(root.entropy)
    run += [0] * (_POOL - len(run))  # padded: a spawn key follows
    entropy = run + _words(tuple(root.spawn_key) + tuple(key))
    hashmix = _Hash()
    pool = [hashmix(entropy[i]) for i in range(_POOL)]
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                pool[dst] = _mix(pool[dst], hashmix(pool[src]))
    for word in entropy[_POOL:]:
        for dst in range(_POOL):
            pool[dst] = _mix(pool[dst], hashmix(word))
    # the last word, the stream number, for every stream at once (uint64
    # arithmetic wraps mod 2**64, and every result is taken mod 2**32)
    last = np.arange(first, first + n, dtype=np.uint64)
    lanes = [np.full(n, p, dtype=np.uint64) for p in pool]
    for dst in range(_POOL):
        lanes[dst] = _mix(lanes[dst], hashmix(last))
    # generate_state(4, uint64): 8 words from the pool, cycled
    const, words = _INIT_B, []
    for i in range(8):
        value = lanes[i % _POOL] ^ np.uint64(const)
        const = (const * _MULT_B) & _M32
        value = (value * np.uint64(const)) & np.uint64(_M32)
        words.append(value ^ (value >> np.uint64(16)))
    seed = [
        (words[2 * j] | (words[2 * j + 1] << np.uint64(32))).tolist() for j in range(4)
    ]
    out = []
    for s in range(n):  # pcg64_set_seed: srandom_r(state, inc)
        initstate = (seed[0][s] << 64) | seed[1][s]
        inc = ((((seed[2][s] << 64) | seed[3][s]) << 1) | 1) & _M128
        state = (((inc + initstate) & _M128) * _PCG_MULT + inc) & _M128
        out.append(
            {
                "bit_generator": "PCG64",
                "state": {"state": state, "inc": inc},
                "has_uint32": 0,
                "uinteger": 0,
            }
        )
    return out


def _slow(root: np.random.SeedSequence, key: tuple) -> np.random.Generator:
    seq = np.random.SeedSequence(root.entropy, spawn_key=tuple(root.spawn_key) + key)
    return np.random.Generator(np.random.PCG64(seq))


_CHECKED: list[bool] = []


def _agrees() -> bool:
    """Whether :func:`stream_states` gives numpy's own states (checked once)."""
    if not _CHECKED:
        roots = [
            np.random.SeedSequence(0),
            np.random.SeedSequence(2**130 + 12345, spawn_key=(3, 2**40)),
        ]
        try:
            ok = all(
                state == _slow(root, (1, 7, 5 + s)).bit_generator.state
                for root in roots
                for s, state in enumerate(stream_states(root, (1, 7), 5, 3))
            )
        except Exception:  # pragma: no cover - a numpy that changed its hash
            ok = False
        _CHECKED.append(ok)
    return _CHECKED[0]


def streams(
    root: np.random.SeedSequence, key: tuple, first: int, n: int
) -> Iterator[np.random.Generator]:
    """The generators of streams ``key + (first + s,)`` for ``s = 0 .. n - 1``.

    The same draws as building each stream on its own, at a fraction of the
    cost. One Generator is re-seeded for every stream: use each before asking
    for the next (do not keep it).
    """
    try:
        states = stream_states(root, key, first, n) if _agrees() else None
    except (ValueError, TypeError):
        states = None
    if states is None:
        for s in range(n):
            yield _slow(root, (*key, first + s))
        return
    bit_generator = np.random.PCG64(0)
    gen = np.random.Generator(bit_generator)
    for state in states:
        bit_generator.state = state
        yield gen


def seed_sequence(rng) -> np.random.SeedSequence:
    """The root SeedSequence for ``rng`` (SPEC 7: None, int, Generator, SeedSequence).

    A Generator is advanced (four 64-bit draws give the entropy), so two calls
    with the same Generator give different, reproducible results, as with scipy.
    """
    if rng is None:
        return np.random.SeedSequence()
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        entropy = rng.integers(0, 2**63, size=4, dtype=np.uint64)
        return np.random.SeedSequence([int(e) for e in entropy])
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError("`rng` must be a non-negative integer seed.")
        return np.random.SeedSequence(int(rng))
    if isinstance(rng, np.random.RandomState):
        raise TypeError(
            "`rng` must be an int, numpy.random.Generator or SeedSequence; "
            "legacy RandomState is not supported (use np.random.default_rng)."
        )
    raise TypeError(
        "`rng` must be None, an int, a numpy.random.Generator or a "
        f"numpy.random.SeedSequence, not {type(rng).__name__}."
    )
