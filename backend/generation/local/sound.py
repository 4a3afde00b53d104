"""The soundtrack: a short synthesized piece exactly as long as the video, from the design's mood. numpy only.

A chord progression in a key chosen by the mood (major for bright, calm and warm, minor for dark and energetic),
at the mood's tempo, root note from the design's digest. Voices: a soft pad (the chord, a few harmonics, slow
attack), a bass (the chord's root), an arpeggio of plucked chord tones in eighth notes (panned a little), and for
bright and energetic moods a kick on the beat and a hi-hat off the beat (seeded noise). A 50 ms fade-in, a 1 s
fade-out, a soft limiter (tanh) and a peak at -3 dBFS. Stereo, 48 kHz, float32 planar.
"""

from __future__ import annotations

import numpy as np

from backend.generation.local.design import Design

SAMPLE_RATE = 48_000

# (scale semitones, progression as scale degrees (0-based), tempo bpm, drums)
MOODS: dict[str, tuple[tuple[int, ...], tuple[int, ...], int, bool]] = {
    "bright": ((0, 2, 4, 5, 7, 9, 11), (0, 4, 5, 3), 112, True),
    "calm": ((0, 2, 4, 5, 7, 9, 11), (0, 5, 3, 4), 80, False),
    "warm": ((0, 2, 4, 5, 7, 9, 11), (0, 3, 5, 4), 96, False),
    "dark": ((0, 2, 3, 5, 7, 8, 10), (0, 5, 2, 6), 76, False),
    "energetic": ((0, 2, 3, 5, 7, 8, 10), (0, 5, 2, 6), 124, True),
}


def _freq(midi: float) -> float:
    return 440.0 * 2 ** ((midi - 69) / 12)


def _chord(scale: tuple[int, ...], degree: int, root_midi: int) -> list[int]:
    notes = []
    for step in (0, 2, 4):
        d = degree + step
        notes.append(root_midi + scale[d % 7] + 12 * (d // 7))
    return notes


def _tone(freq: float, n: int, harmonics: tuple[float, ...]) -> np.ndarray:
    t = np.arange(n, dtype=np.float32) / SAMPLE_RATE
    out = np.zeros(n, np.float32)
    for k, amp in enumerate(harmonics, start=1):
        out += amp * np.sin(2 * np.pi * freq * k * t, dtype=np.float32)
    return out


def soundtrack(design: Design, duration_s: float) -> np.ndarray:
    """A (2, duration_s * 48000) float32 array in [-1, 1]."""
    n_total = round(duration_s * SAMPLE_RATE)
    scale, progression, bpm, drums = MOODS.get(design.mood, MOODS["calm"])
    root = 45 + int(design.rand("key") * 12)  # A2 .. G#3
    beat = 60.0 / bpm
    bar = 4 * beat
    left = np.zeros(n_total + SAMPLE_RATE, np.float32)  # room for tails, cut at the end
    right = np.zeros_like(left)
    rng = np.random.default_rng(int.from_bytes(design.digest[:8], "big"))

    def add(sig: np.ndarray, start_s: float, pan: float = 0.0) -> None:
        i = round(start_s * SAMPLE_RATE)
        if i >= n_total:
            return
        sig = sig[: len(left) - i]
        left[i : i + len(sig)] += sig * (1 - pan) * 0.5 * 2**0.5
        right[i : i + len(sig)] += sig * (1 + pan) * 0.5 * 2**0.5

    n_bars = int(np.ceil(duration_s / bar)) + 1
    for b in range(n_bars):
        start = b * bar
        if start >= duration_s:
            break
        chord = _chord(scale, progression[b % len(progression)], root + 12)
        n = int(bar * SAMPLE_RATE)
        env = np.minimum(1.0, np.arange(n, dtype=np.float32) / (0.35 * SAMPLE_RATE))
        env *= np.minimum(1.0, (n - np.arange(n, dtype=np.float32)) / (0.25 * SAMPLE_RATE))
        pad = sum(_tone(_freq(m) * 1.003**k, n, (0.5, 0.18, 0.08)) for k, m in enumerate(chord))
        add(pad * env * 0.09, start)
        # bass: the root, twice a bar
        for half in range(2):
            nb = int(2 * beat * SAMPLE_RATE)
            benv = np.exp(-np.arange(nb, dtype=np.float32) / (0.6 * SAMPLE_RATE))
            benv *= np.minimum(1.0, np.arange(nb, dtype=np.float32) / 200)
            add(_tone(_freq(chord[0] - 12), nb, (0.8, 0.3)) * benv * 0.22, start + half * 2 * beat)
        # arpeggio: eighth notes over the chord tones an octave up
        pattern = (0, 1, 2, 1, 0, 2, 1, 2)
        for k in range(8):
            t0 = start + k * beat / 2
            if t0 >= duration_s:
                break
            na = int(0.45 * SAMPLE_RATE)
            aenv = np.exp(-np.arange(na, dtype=np.float32) / (0.09 * SAMPLE_RATE))
            aenv *= np.minimum(1.0, np.arange(na, dtype=np.float32) / 60)
            add(
                _tone(_freq(chord[pattern[k]] + 12), na, (0.6, 0.25, 0.1)) * aenv * 0.11,
                t0,
                pan=0.35 if k % 2 else -0.35,
            )
        if drums:
            for k in range(4):
                t0 = start + k * beat
                nk = int(0.3 * SAMPLE_RATE)
                tk = np.arange(nk, dtype=np.float32) / SAMPLE_RATE
                sweep = 45 + 75 * np.exp(-tk / 0.04)
                kick = np.sin(2 * np.pi * np.cumsum(sweep) / SAMPLE_RATE) * np.exp(-tk / 0.12)
                add(kick.astype(np.float32) * 0.45, t0)
                nh = int(0.06 * SAMPLE_RATE)
                noise = rng.standard_normal(nh).astype(np.float32)
                hat = np.diff(noise, prepend=0.0) * np.exp(
                    -np.arange(nh, dtype=np.float32) / (0.012 * SAMPLE_RATE)
                )
                add(hat.astype(np.float32) * 0.05, t0 + beat / 2, pan=0.25)

    out = np.stack([left[:n_total], right[:n_total]])
    out = np.tanh(out * 1.2)
    fade_in = min(n_total, int(0.05 * SAMPLE_RATE))
    fade_out = min(n_total, int(1.0 * SAMPLE_RATE))
    out[:, :fade_in] *= np.linspace(0, 1, fade_in, dtype=np.float32)
    out[:, n_total - fade_out :] *= np.linspace(1, 0, fade_out, dtype=np.float32) ** 2
    peak = float(np.abs(out).max()) or 1.0
    track: np.ndarray = (out * (0.708 / peak)).astype(np.float32)
    return track
