"""Small PDFs written byte by byte for the full-text tests: pages of text lines (Helvetica, one line each), and a
page whose content stream inflates to many megabytes (a decompression bomb)."""

from __future__ import annotations

import zlib


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (object 1 is the catalog), with its cross-reference table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _escape(line: str) -> bytes:
    return line.encode("latin-1").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def text_pdf(pages: list[list[str]]) -> bytes:
    """One page per list of lines, each line drawn on its own row."""
    n = len(pages)
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(n))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, lines in enumerate(pages):
        rows = b"".join(b"(" + _escape(line) + b") Tj 0 -14 Td\n" for line in lines)
        stream = b"BT /F1 11 Tf 72 760 Td\n" + rows + b"ET"
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            b"/Contents %d 0 R >>" % (5 + 2 * i)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    return _pdf(objects)


def blank_pdf(pages: int) -> bytes:
    """Pages with nothing drawn on them (a scan's pages have images, no text: the same to a text reader)."""
    kids = b" ".join(b"%d 0 R" % (3 + i) for i in range(pages))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages]
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"] * pages
    return _pdf(objects)


def bomb_pdf(megabytes: int = 300) -> bytes:
    """One page whose content stream is a few hundred kilobytes deflated and ``megabytes`` inflated."""
    inflated = b"0 0 m " * (megabytes * 1_000_000 // 6)
    stream = zlib.compress(inflated, 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    return _pdf(objects)
