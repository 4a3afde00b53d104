"""Motion: a scene's layers, or the supplied start and end frames, animated and encoded as H.264 + AAC in MP4.

Built for speed on two cores (bench/generation.py): every layer is drawn once (scene.py) and converted once to
Y'CbCr 4:2:0 planes (BT.709, limited range, the colour description written into the stream); a frame is then only
cheap array work in that space, the encoder's own format, so no per-frame colour conversion:
- the background is drawn 10 % larger than the frame and panned (a slice of it, at even offsets);
- floating shapes drift and bob, text blocks slide and fade: alpha blends of small sprites in 16-bit integers;
- a transition between text beats is an accent band sweeping across the frame (a fill);
- supplied frames zoom slowly (a resample of their planes per frame: the one costly operation, only on that path).
Audio: sound.py's soundtrack, AAC 128 kb/s 48 kHz stereo. Video: libx264 (preset, CRF and threads from the local
provider's settings), yuv420p, High profile, a keyframe every 2 s, `+faststart` (the index first, for players and
networks that fetch by URL). Frame count = duration x fps exactly, so the video lasts exactly 5, 10 or 15 s.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image, ImageDraw

from backend.generation.local import layers, legible, sound
from backend.generation.local.design import Design
from backend.generation.local.scene import Scene

# BT.709 limited range
_KR, _KB = 0.2126, 0.0722


def rgb_to_yuv(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(h, w, 3) uint8 RGB -> Y (h, w), Cb and Cr (h, w) as float32."""
    f = rgb.astype(np.float32) * (1 / 255)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    y = _KR * r + (1 - _KR - _KB) * g + _KB * b
    cb = (b - y) / (2 * (1 - _KB))
    cr = (r - y) / (2 * (1 - _KR))
    return 16 + 219 * y, 128 + 224 * cb, 128 + 224 * cr


def _half(p: np.ndarray) -> np.ndarray:
    """2x2 average of a float plane of even size."""
    half: np.ndarray = 0.25 * (p[0::2, 0::2] + p[1::2, 0::2] + p[0::2, 1::2] + p[1::2, 1::2])
    return half


def _u8(p: np.ndarray) -> np.ndarray:
    return np.clip(p + 0.5, 0, 255).astype(np.uint8)


def planes_of(img: Image.Image) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An RGB picture of even size -> Y, Cb, Cr uint8 planes (chroma at half size)."""
    y, cb, cr = rgb_to_yuv(np.asarray(img.convert("RGB")))
    return _u8(y), _u8(_half(cb)), _u8(_half(cr))


@dataclass
class YuvSprite:
    """An RGBA picture as planes ready to blend: colour (uint16) and alpha (0..256, uint16), full and half size."""

    y: np.ndarray
    cb: np.ndarray
    cr: np.ndarray
    a: np.ndarray
    a2: np.ndarray

    @classmethod
    def of(cls, img: Image.Image) -> YuvSprite:
        w, h = img.width + img.width % 2, img.height + img.height % 2
        if (w, h) != img.size:
            padded = Image.new("RGBA", (w, h), (0, 0, 0, 0))
            padded.paste(img, (0, 0))
            img = padded
        arr = np.asarray(img.convert("RGBA"))
        alpha = arr[..., 3].astype(np.float32)
        y, cb, cr = rgb_to_yuv(arr[..., :3])
        a_half = _half(alpha)
        # chroma of a half-transparent 2x2 block: the alpha-weighted mean, so edges do not bleed black
        wsum = np.maximum(a_half * 4, 1e-3)

        def wchroma(p: np.ndarray) -> np.ndarray:
            mean: np.ndarray = (
                p[0::2, 0::2] * alpha[0::2, 0::2]
                + p[1::2, 0::2] * alpha[1::2, 0::2]
                + p[0::2, 1::2] * alpha[0::2, 1::2]
                + p[1::2, 1::2] * alpha[1::2, 1::2]
            ) / wsum
            return mean

        def a256(p: np.ndarray) -> np.ndarray:
            return np.round(p * (256 / 255)).astype(np.uint16)

        return cls(
            _u8(y).astype(np.uint16),
            _u8(wchroma(cb)).astype(np.uint16),
            _u8(wchroma(cr)).astype(np.uint16),
            a256(alpha),
            a256(a_half),
        )


class Frame:
    """One yuv420p frame as a (h * 3/2, w) array (PyAV's layout) and views of its three planes."""

    def __init__(self, w: int, h: int) -> None:
        self.w, self.h = w, h
        self.buf = np.empty((h * 3 // 2, w), np.uint8)
        q = h // 4
        self.y = self.buf[:h]
        self.cb = self.buf[h : h + q].reshape(h // 2, w // 2)
        self.cr = self.buf[h + q :].reshape(h // 2, w // 2)

    def fill_rect(self, x0: int, x1: int, yuv: tuple[int, int, int]) -> None:
        """A full-height band [x0, x1) of one colour."""
        x0, x1 = max(0, x0 - x0 % 2), min(self.w, x1 + x1 % 2)
        if x1 <= x0:
            return
        self.y[:, x0:x1] = yuv[0]
        self.cb[:, x0 // 2 : x1 // 2] = yuv[1]
        self.cr[:, x0 // 2 : x1 // 2] = yuv[2]

    def blend(self, sp: YuvSprite, x: int, y: int, opacity: float = 1.0) -> None:
        if opacity <= 0.004:
            return
        x -= x % 2
        y -= y % 2
        for dst, src, alpha, sx, sy in (
            (self.y, sp.y, sp.a, x, y),
            (self.cb, sp.cb, sp.a2, x // 2, y // 2),
            (self.cr, sp.cr, sp.a2, x // 2, y // 2),
        ):
            hh, ww = src.shape
            dh, dw = dst.shape
            x0, y0, x1, y1 = max(0, sx), max(0, sy), min(dw, sx + ww), min(dh, sy + hh)
            if x1 <= x0 or y1 <= y0:
                return
            s = src[y0 - sy : y1 - sy, x0 - sx : x1 - sx]
            a = alpha[y0 - sy : y1 - sy, x0 - sx : x1 - sx]
            if opacity < 0.996:
                a = (a * np.uint16(round(opacity * 256))) >> 8
            d = dst[y0:y1, x0:x1]
            d[...] = (s * a + d * (256 - a)) >> 8


def ease_out(t: float) -> float:
    t = min(1.0, max(0.0, t))
    return 1 - (1 - t) ** 3


def smooth(t: float) -> float:
    t = min(1.0, max(0.0, t))
    return t * t * (3 - 2 * t)


@dataclass(frozen=True)
class Encoding:
    fps: int
    preset: str
    crf: int
    threads: int


Progress = Callable[[float], None]


def _open(
    path: Path, w: int, h: int, enc: Encoding
) -> tuple[av.container.OutputContainer, av.VideoStream, av.AudioStream]:
    out = av.open(str(path), mode="w", format="mp4", options={"movflags": "+faststart"})
    vs = out.add_stream("libx264", rate=enc.fps)
    vs.width, vs.height, vs.pix_fmt = w, h, "yuv420p"
    vs.time_base = Fraction(1, enc.fps)
    vs.codec_context.gop_size = 2 * enc.fps
    vs.thread_count = enc.threads
    vs.options = {
        "preset": enc.preset,
        "crf": str(enc.crf),
        "profile": "high",
        "x264-params": "colorprim=bt709:transfer=bt709:colormatrix=bt709:range=tv",
    }
    aud = out.add_stream("aac", rate=sound.SAMPLE_RATE, layout="stereo")
    aud.bit_rate = 128_000
    return out, vs, aud


def _mux_audio(out: av.container.OutputContainer, aud: av.AudioStream, samples: np.ndarray) -> None:
    step = 1024
    n = samples.shape[1]
    for i in range(0, n, step):
        chunk = np.ascontiguousarray(samples[:, i : i + step])
        frame = av.AudioFrame.from_ndarray(chunk, format="fltp", layout="stereo")
        frame.sample_rate = sound.SAMPLE_RATE
        frame.pts = i
        frame.time_base = Fraction(1, sound.SAMPLE_RATE)
        for packet in aud.encode(frame):
            out.mux(packet)
    for packet in aud.encode(None):
        out.mux(packet)


def encode(
    path: Path,
    w: int,
    h: int,
    duration: int,
    enc: Encoding,
    design: Design,
    draw_frame: Callable[[Frame, float], None],
    progress: Progress | None,
) -> float:
    n_frames = duration * enc.fps
    out, vs, aud = _open(path, w, h, enc)
    try:
        _mux_audio(out, aud, sound.soundtrack(design, duration))
        frame = Frame(w, h)
        for i in range(n_frames):
            draw_frame(frame, i / enc.fps)
            vf = av.VideoFrame.from_ndarray(frame.buf, format="yuv420p")
            vf.pts = i
            for packet in vs.encode(vf):
                out.mux(packet)
            if progress is not None and i % 10 == 9:
                progress(0.05 + 0.9 * (i + 1) / n_frames)
        for packet in vs.encode(None):
            out.mux(packet)
    finally:
        out.close()
    return n_frames / enc.fps


def _yuv_of(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    y, cb, cr = rgb_to_yuv(np.array([[rgb]], np.uint8))
    return int(round(float(y[0, 0]))), int(round(float(cb[0, 0]))), int(round(float(cr[0, 0])))


def animate_scene(scene: Scene, duration: int, enc: Encoding, path: Path, progress: Progress | None) -> float:
    """The scene in motion, encoded to `path`; returns the exact duration."""
    w, h = scene.size
    return encode(path, w, h, duration, enc, scene.design, scene_drawer(scene, duration), progress)


def scene_drawer(scene: Scene, duration: int) -> Callable[[Frame, float], None]:
    """The scene in motion: background pan, drifting shapes, text beats with sweeps between them. Returns the
    function drawing the frame at time t (the layers converted once, here)."""
    design = scene.design
    w, h = scene.size
    s = min(w, h)
    margin = int(max(w, h) * 0.05) // 2 * 2
    bg_y, bg_cb, bg_cr = planes_of(layers.background(design, (w + 2 * margin, h + 2 * margin)))
    ang = design.rand("pan") * math.tau
    pan = (math.cos(ang) * margin * 0.9, math.sin(ang) * margin * 0.9)
    floaters = [(sp, YuvSprite.of(sp.image)) for sp in scene.floaters]
    brand_img, brand_at = (
        scene.framed("brand", scene.brand, scene.brand_pos()) if scene.brand is not None else (None, (0, 0))
    )
    brand = YuvSprite.of(brand_img) if brand_img is not None else None
    sweep_yuv = _yuv_of(design.palette.accent)

    # beats: (sprite, position, start, end); 5 s: the headline and its line; 10 s / 15 s: one text per beat. Each
    # text moves with the panel that makes it legible, if it has one (scene.py)
    n_beats = {5: 1, 10: 2, 15: 3}.get(duration, max(1, duration // 5))
    texts: list[tuple[Image.Image, tuple[int, int]]] = [
        scene.framed("headline", scene.headline, scene.headline_pos())
    ]
    for i, block in enumerate(scene.beats[: n_beats - 1]):
        texts.append(scene.framed(f"beat{i}", block, scene.line_pos(block, below_headline=False)))
    n_beats = len(texts)
    beat_len = duration / n_beats
    beats = []
    for i, (img, pos) in enumerate(texts):
        beats.append((YuvSprite.of(img), pos, i * beat_len, (i + 1) * beat_len, i == n_beats - 1))
    sub = None
    if n_beats == 1 and scene.first_line_fits():
        img, at = scene.framed("line0", scene.lines[0], scene.line_pos(scene.lines[0], below_headline=True))
        sub = (YuvSprite.of(img), at)
    sweep_s = 0.7
    rise = s * 0.06

    def draw(frame: Frame, t: float) -> None:
        e = smooth(t / duration)
        ox = int(margin + pan[0] * (2 * e - 1))
        oy = int(margin + pan[1] * (2 * e - 1))
        ox, oy = ox - ox % 2, oy - oy % 2
        frame.y[...] = bg_y[oy : oy + h, ox : ox + w]
        frame.cb[...] = bg_cb[oy // 2 : oy // 2 + h // 2, ox // 2 : ox // 2 + w // 2]
        frame.cr[...] = bg_cr[oy // 2 : oy // 2 + h // 2, ox // 2 : ox // 2 + w // 2]
        for sp, ys in floaters:
            fx = sp.x + sp.drift[0] * (e - 0.5)
            fy = sp.y + sp.drift[1] * (e - 0.5) + sp.bob * math.sin(math.tau * t / sp.period_s + sp.phase)
            frame.blend(ys, int(fx), int(fy))
        if brand is not None:
            k = ease_out((t - 0.6) / 0.8)
            frame.blend(brand, brand_at[0], int(brand_at[1] + rise * 0.5 * (1 - k)), k)
        for beat, (x, y), t0, t1, last in beats:
            if not t0 <= t < t1 + 1e-9:
                continue
            k_in = ease_out((t - t0 - 0.15) / 0.7)
            k_out = 1.0 if last else 1 - smooth((t - (t1 - 0.45)) / 0.35)
            dy = rise * (1 - k_in) - rise * 0.5 * (1 - k_out)
            frame.blend(beat, x, int(y + dy), min(k_in, k_out))
            if sub is not None:
                k_sub = ease_out((t - t0 - 0.7) / 0.7)
                frame.blend(sub[0], sub[1][0], int(sub[1][1] + rise * (1 - k_sub)), k_sub)
        for _sp, _pos, _t0, t1, last in beats:  # the sweep across each boundary between beats
            if last:
                continue
            u = (t - (t1 - sweep_s / 2)) / sweep_s
            if 0 <= u <= 1:
                band = int(w * 0.45)
                x0 = int(-band + (w + band) * smooth(u))
                frame.fill_rect(x0, x0 + band, sweep_yuv)

    return draw


class _Zoomable:
    """A supplied frame, covered onto the output size and kept `headroom` times larger, as three L pictures, so
    that a zoom from 1 to `headroom` is a resample of a crop (box) of them per frame."""

    def __init__(self, img: Image.Image, size: tuple[int, int], headroom: float) -> None:
        w, h = size
        big = (int(w * headroom) // 2 * 2, int(h * headroom) // 2 * 2)
        scale = max(big[0] / img.width, big[1] / img.height)
        resized = img.resize(
            (max(big[0], round(img.width * scale)), max(big[1], round(img.height * scale))),
            Image.Resampling.BICUBIC,
        )
        left, top = (resized.width - big[0]) // 2, (resized.height - big[1]) // 2
        covered = resized.crop((left, top, left + big[0], top + big[1]))
        y, cb, cr = planes_of(covered)
        self.size = size
        self.big = big
        self.planes = [Image.fromarray(p, "L") for p in (y, cb, cr)]

    def draw(self, frame: Frame, zoom: float, cx: float = 0.5, cy: float = 0.5) -> None:
        """Show the frame at `zoom` (1: the whole picture) centred at (cx, cy) of the picture (kept inside)."""
        bw, bh = self.big
        cw, ch = bw / zoom, bh / zoom
        x0 = min(max(0.0, cx * bw - cw / 2), bw - cw)
        y0 = min(max(0.0, cy * bh - ch / 2), bh - ch)
        for plane, dst, div in (
            (self.planes[0], frame.y, 1),
            (self.planes[1], frame.cb, 2),
            (self.planes[2], frame.cr, 2),
        ):
            box = (x0 / div, y0 / div, (x0 + cw) / div, (y0 + ch) / div)
            out = plane.resize((dst.shape[1], dst.shape[0]), Image.Resampling.BILINEAR, box=box)
            dst[...] = np.asarray(out)


def caption(scene: Scene) -> Image.Image:
    """The headline on a band over the supplied frames: the background colour when it contrasts with the
    headline's (WCAG AA), else near-black or near-white, nearly opaque (legible over any photo)."""
    head = scene.headline
    colour = next((c.colour for c in scene.checks if c.name == "headline"), scene.design.palette.text)
    fill = scene.design.palette.background
    if legible.lowest_contrast(colour, np.array([[fill]], np.uint8)) < legible.AA_NORMAL + legible.MARGIN:
        fill = legible.DARK if colour == legible.LIGHT else legible.LIGHT
    pad = min(scene.size) // 30
    band = Image.new("RGBA", (head.width + 2 * pad, head.height + 2 * pad), fill + (0,))
    ImageDraw.Draw(band).rounded_rectangle(
        (0, 0, band.width - 1, band.height - 1), radius=pad, fill=fill + (224,)
    )
    band.alpha_composite(head, (pad, pad))
    return band


def animate_sources(
    scene: Scene,
    sources: list[Image.Image],
    duration: int,
    enc: Encoding,
    path: Path,
    progress: Progress | None,
) -> float:
    """The supplied frames in motion, encoded to `path`; returns the exact duration."""
    w, h = scene.size
    return encode(path, w, h, duration, enc, scene.design, sources_drawer(scene, sources, duration), progress)


def sources_drawer(scene: Scene, sources: list[Image.Image], duration: int) -> Callable[[Frame, float], None]:
    """One supplied frame: a slow zoom into it, the caption and brand fading in. Two: the start frame zooms in,
    a transition (crossfade, push or sweep, from the design) leads to the end frame, which settles to rest, whole,
    for the last 0.6 s; caption and brand leave before it, so the last frame is the end frame."""
    design = scene.design
    w, h = scene.size
    s = min(w, h)
    headroom = 1.12
    start = _Zoomable(sources[0], (w, h), headroom)
    end = _Zoomable(sources[1], (w, h), headroom) if len(sources) > 1 else None
    cap = YuvSprite.of(caption(scene))
    pad = min(scene.size) // 30
    cap_pos = (scene.layout.text_x - pad, scene.headline_pos()[1] - pad)
    brand = YuvSprite.of(scene.brand) if scene.brand is not None else None
    style = ("crossfade", "push", "sweep")[int(design.rand("transition") * 3)]
    sweep_yuv = _yuv_of(design.palette.accent)
    cx0, cy0 = 0.5 + 0.08 * (design.rand("cx") - 0.5), 0.5 + 0.08 * (design.rand("cy") - 0.5)
    mid, half_tr, hold = duration / 2, 0.5, 0.6
    other = Frame(w, h)
    rise = s * 0.05

    def draw(frame: Frame, t: float) -> None:
        if end is None:
            start.draw(frame, 1 + (headroom - 1) * smooth(t / duration), cx0, cy0)
            overlays_out = 1.0
        else:
            za = 1 + 0.08 * smooth(t / (mid + half_tr))
            zb = 1 + 0.08 * (1 - smooth((t - (mid - half_tr)) / (duration - hold - (mid - half_tr))))
            if t < mid - half_tr:
                start.draw(frame, za, cx0, cy0)
            elif t >= mid + half_tr:
                end.draw(frame, zb)
            else:
                u = smooth((t - (mid - half_tr)) / (2 * half_tr))
                if style == "crossfade":
                    start.draw(frame, za, cx0, cy0)
                    end.draw(other, zb)
                    k = np.uint16(round(u * 256))
                    frame.buf[...] = (other.buf.astype(np.uint16) * k + frame.buf * (256 - k)) >> 8
                elif style == "push":
                    start.draw(other, za, cx0, cy0)
                    end.draw(frame, zb)
                    shift = int(w * u) // 2 * 2
                    if shift < w:
                        _push(frame, other, shift)
                else:
                    start.draw(frame, za, cx0, cy0)
                    end.draw(other, zb)
                    edge = int((w * 1.3) * u - w * 0.15) // 2 * 2
                    if edge > 0:
                        e = min(w, edge)
                        frame.y[:, :e] = other.y[:, :e]
                        frame.cb[:, : e // 2] = other.cb[:, : e // 2]
                        frame.cr[:, : e // 2] = other.cr[:, : e // 2]
                    frame.fill_rect(edge, edge + int(w * 0.06), sweep_yuv)
            overlays_out = 1 - smooth((t - (duration - 1.6)) / 0.5)
        k_cap = min(ease_out((t - 0.8) / 0.7), overlays_out)
        frame.blend(cap, cap_pos[0], int(cap_pos[1] + rise * (1 - ease_out((t - 0.8) / 0.7))), k_cap)
        if brand is not None:
            frame.blend(
                brand,
                scene.brand_pos()[0],
                scene.brand_pos()[1],
                min(ease_out((t - 1.2) / 0.8), overlays_out),
            )

    return draw


def _push(frame: Frame, old: Frame, shift: int) -> None:
    """`frame` holds the incoming picture; the outgoing one (`old`) leaves to the left by `shift` pixels and the
    incoming one follows it in from the right."""
    w = frame.w
    for dst, src, d in ((frame.y, old.y, 1), (frame.cb, old.cb, 2), (frame.cr, old.cr, 2)):
        sh, ww = shift // d, w // d
        incoming = dst[:, :sh].copy() if sh else None
        dst[:, : ww - sh] = src[:, sh:]
        if incoming is not None:
            dst[:, ww - sh :] = incoming
