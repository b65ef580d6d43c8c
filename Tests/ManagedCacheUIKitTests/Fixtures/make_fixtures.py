#!/usr/bin/env python3
"""Generates the real-encoder image fixtures next to this script.

Run once by hand with Pillow 13.0.0 (`pip install pillow`, then
`python3 make_fixtures.py`); the generated files are committed and CI never runs
this script or needs Pillow. The images are deterministic patterns (no randomness)
so regenerating with the same Pillow version gives the same pixels.

Each file stays well under 20 KB. The Swift tests hard-code the sizes and frame
counts chosen here, so keep them in sync if you change anything.
"""

import math
import os

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))


def pattern(width, height, mode, phase=0):
    """A smooth gradient with a few rings, so lossy encoders have real work to do."""
    image = Image.new("RGBA", (width, height))
    pixels = image.load()
    for y in range(height):
        for x in range(width):
            ring = int(127 + 127 * math.sin((x * x + y * y) / 60.0 + phase))
            red = (x * 255) // max(1, width - 1)
            green = (y * 255) // max(1, height - 1)
            alpha = 255 if (x + y) % 7 else 160
            pixels[x, y] = (red, green, ring, alpha)
    return image.convert(mode) if mode != "RGBA" else image


def save(image, name, **options):
    path = os.path.join(HERE, name)
    image.save(path, **options)
    size = os.path.getsize(path)
    assert size <= 20 * 1024, f"{name} is {size} bytes"
    print(f"{name}: {image.size[0]}x{image.size[1]}, {size} bytes")


def frames(width, height, count, mode):
    return [pattern(width, height, mode, phase=index * 2.0) for index in range(count)]


def save_animation(images, name, durations, loop, quantize=False, **options):
    """Saves `images` as one animated file with per-frame `durations` in milliseconds; `loop` is
    Pillow's loop option (None leaves it out)."""
    if quantize:
        images = [image.quantize(colors=32) for image in images]
    if loop is not None:
        options["loop"] = loop
    path = os.path.join(HERE, name)
    images[0].save(path, save_all=True, append_images=images[1:], duration=durations, **options)
    size = os.path.getsize(path)
    assert size <= 20 * 1024, f"{name} is {size} bytes"
    print(f"{name}: {images[0].size[0]}x{images[0].size[1]}, {len(images)} images, {size} bytes")


def main():
    # PNG: 8-bit RGBA, odd width so rows are not a multiple of any word size.
    save(pattern(37, 23, "RGBA"), "rgba.png")
    # PNG: palette (colour type 3, with PLTE and tRNS-free output).
    save(pattern(40, 30, "RGB").quantize(colors=16), "palette.png")
    # PNG: animated (APNG: acTL, fcTL and fdAT chunks), three frames.
    png_frames = frames(16, 12, 3, "RGBA")
    png_frames[0].save(
        os.path.join(HERE, "animated.png"),
        save_all=True, append_images=png_frames[1:], duration=100, loop=0,
    )
    print(f"animated.png: 16x12, {os.path.getsize(os.path.join(HERE, 'animated.png'))} bytes")
    # JPEG: baseline with restart markers every row of MCUs, so the RSTn path is exercised.
    save(pattern(64, 48, "RGB"), "baseline.jpg", quality=85, restart_marker_rows=1)
    # JPEG: progressive (several SOS scans).
    save(pattern(64, 48, "RGB"), "progressive.jpg", quality=85, progressive=True)
    # JPEG: a portrait photo as cameras store it, 64x48 landscape pixels with EXIF orientation 6
    # (turn 90 degrees clockwise): upright it is 48x64.
    exif = Image.Exif()
    exif[0x0112] = 6
    save(pattern(64, 48, "RGB"), "rotated.jpg", quality=85, exif=exif.tobytes())
    # GIF: a single frame with a global colour table.
    save(pattern(32, 24, "RGB").quantize(colors=32), "still.gif")
    # GIF: three frames, looping forever.
    animated = [frame.quantize(colors=32) for frame in frames(24, 16, 3, "RGB")]
    animated[0].save(
        os.path.join(HERE, "animated.gif"),
        save_all=True, append_images=animated[1:], duration=100, loop=0,
    )
    print(f"animated.gif: 24x16, {os.path.getsize(os.path.join(HERE, 'animated.gif'))} bytes")
    # WebP: lossy (simple format, a lone VP8 chunk).
    save(pattern(48, 32, "RGB"), "lossy.webp", quality=80)
    # WebP: lossy with alpha (extended format: VP8X, ALPH, VP8).
    save(pattern(30, 20, "RGBA"), "lossy-alpha.webp", quality=80)
    # WebP: lossless (VP8L).
    save(pattern(33, 17, "RGBA"), "lossless.webp", lossless=True)
    # WebP: animated, three frames (VP8X, ANIM, ANMF).
    webp_frames = frames(20, 12, 3, "RGB")
    webp_frames[0].save(
        os.path.join(HERE, "animated.webp"),
        save_all=True, append_images=webp_frames[1:], duration=100, loop=0, quality=80,
    )
    print(f"animated.webp: 20x12, {os.path.getsize(os.path.join(HERE, 'animated.webp'))} bytes")
    # Animation timing: per-frame durations, tiny GIF delays and loop counts.
    # GIF: delays of 0, 10, 20 and 110 ms (Pillow writes no graphic control extension for the
    # first frame, then hundredths 1, 2 and 11) and NETSCAPE2.0 loop count 2. Browsers play the
    # two tiny delays at 100 ms and the file three times.
    save_animation(frames(24, 16, 4, "RGB"), "timed.gif", [0, 10, 20, 110], loop=2, quantize=True)
    # GIF: two frames of 50 ms with no NETSCAPE2.0 block: it plays once.
    save_animation(frames(24, 16, 2, "RGB"), "once.gif", [50, 50], loop=None, quantize=True)
    # APNG: delays of 10, 40 and 250 ms (fcTL delay_num/delay_den), acTL num_plays 3.
    save_animation(frames(16, 12, 3, "RGBA"), "timed.png", [10, 40, 250], loop=3)
    # APNG whose IDAT default image is not part of the animation (no fcTL before it): two frames
    # of 30 and 70 ms, looping forever.
    save_animation(frames(16, 12, 3, "RGBA"), "default-image.png", [30, 70], loop=0, default_image=True)
    # WebP: ANMF durations of 10, 60 and 200 ms, ANIM loop count 2.
    save_animation(frames(20, 12, 3, "RGB"), "timed.webp", [10, 60, 200], loop=2, quality=80)


if __name__ == "__main__":
    main()
