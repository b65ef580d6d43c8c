#!/usr/bin/env python3
"""Generates the AVIF and HEIC fixtures next to this script.

Run once by hand with Pillow 13.0.0 (AVIF, through the libavif its wheels bundle) and
pillow-heif 1.8.1 (HEIC, through libheif and x265): `pip install pillow==13.0.0
pillow-heif==1.8.1`, then `python3 make_modern_fixtures.py`. The generated files are committed;
CI never runs this script or needs either package. The pictures are the deterministic pattern of
make_fixtures.py. The Swift tests hard-code the sizes, brands and frame counts chosen here.
"""

import os

import pillow_heif
from PIL import Image

from make_fixtures import pattern

HERE = os.path.dirname(os.path.abspath(__file__))


def report(name):
    path = os.path.join(HERE, name)
    size = os.path.getsize(path)
    assert size <= 20 * 1024, f"{name} is {size} bytes"
    with open(path, "rb") as file:
        head = file.read(32)
    print(f"{name}: {size} bytes, box {head[4:8]!r}, major brand {head[8:12]!r}")


def main():
    # AVIF still image (major brand `avif`), 40 × 24.
    pattern(40, 24, "RGB").save(os.path.join(HERE, "still.avif"), quality=60)
    report("still.avif")
    # AVIF image sequence (major brand `avis`), three frames of 24 × 16, 100 ms each.
    frames = [pattern(24, 16, "RGB", phase=index) for index in range(3)]
    frames[0].save(os.path.join(HERE, "animated.avif"), save_all=True, append_images=frames[1:], duration=100, quality=60)
    report("animated.avif")
    # HEIC still image (major brand `heic`), 36 × 20.
    heif = pillow_heif.from_pillow(pattern(36, 20, "RGB"))
    heif.save(os.path.join(HERE, "still.heic"), quality=60)
    report("still.heic")


if __name__ == "__main__":
    main()
