"""Zobrist hashing of positions and the transposition table.

A position is keyed exactly by ``white | black << size | turn << 2*size`` (the same key
the rules core uses for repetition). Its Zobrist hash XORs one random 64-bit number per
byte of that key (six byte tables, so hashing costs six lookups, not one per piece; boards
over 23 points add a lookup per further byte), and,
when the 50-ply clock can matter within the search horizon, a number for the clock.

The table is a fixed-size list (entries from the ``Hash`` option in MB, a power of two)
indexed by the low bits of the hash; each slot holds one tuple
``(hash, depth, flag, score, own_after, enemy_after, age)`` where the last two name the best
child found. Replacement: a slot is overwritten unless it holds the same position searched
deeper in the current search.
"""

from __future__ import annotations

import random

EXACT, LOWER, UPPER = 0, 1, 2

_KEY_BYTES = 6  # keys of boards of up to 23 points have at most 2*23+1 = 47 bits
_RNG = random.Random(0x5EED_6075)
BYTE_TABLES: tuple[tuple[int, ...], ...] = tuple(
    tuple(_RNG.getrandbits(64) for _ in range(256)) for _ in range(_KEY_BYTES)
)
CLOCK_KEYS: tuple[int, ...] = tuple(_RNG.getrandbits(64) for _ in range(256))
#: Bytes 6.. of the keys of boards over 23 points (Alquerque 51 bits, Gol-skuish 87 bits).
#: Drawn after the others so the hashes of the smaller boards stay what they were.
_HIGH_BYTES = 6
HIGH_TABLES: tuple[tuple[int, ...], ...] = tuple(
    tuple(_RNG.getrandbits(64) for _ in range(256)) for _ in range(_HIGH_BYTES)
)

#: Rough memory of one filled slot (list pointer + tuple + its ints), for sizing from MB.
ENTRY_BYTES = 120


def zobrist_high(key: int) -> int:
    """The hash of the bytes above the sixth (keys of boards over 23 points; 0 otherwise)."""
    key >>= 48
    z = 0
    for table in HIGH_TABLES:
        if not key:
            break
        z ^= table[key & 255]
        key >>= 8
    if key:
        raise ValueError("position key too wide for the Zobrist tables (boards up to 47 points)")
    return z


class TranspositionTable:
    """Fixed-size hash table of search results; size chosen from megabytes."""

    def __init__(self, megabytes: int = 16):
        self.resize(megabytes)

    def resize(self, megabytes: int) -> None:
        wanted = max(1, megabytes) * 1024 * 1024 // ENTRY_BYTES
        size = 1 << max(10, wanted.bit_length() - 1)
        self.mask = size - 1
        self.slots: list[tuple | None] = [None] * size
        self.age = 0

    def clear(self) -> None:
        self.slots = [None] * (self.mask + 1)
        self.age = 0

    def new_search(self) -> None:
        self.age = (self.age + 1) & 0xFFFF

