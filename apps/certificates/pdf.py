"""The ACORD 25 as a one-page PDF, drawn with ReportLab.

The static frame (boxes, captions, column heads) is drawn once per document into a PDF form
XObject and placed with doForm, so each certificate only adds its own text. Text is real PDF
text, so it can be selected and searched: in the standard Helvetica fonts (nothing embedded)
while it is Windows-1252, the standard fonts' encoding; any other letter (Łódź, №, Ğ) in
DejaVu Sans, shipped in apps/certificates/fonts and embedded as a subset of the glyphs used,
and Chinese, Japanese kana and Hangul in the PDF's standard CJK fonts, which viewers supply
(`CertificateCanvas`). ReportLab drew each letter the standard fonts lack as a black square.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import unicodedata
from pathlib import Path

from reportlab.lib.pagesizes import letter
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas

from apps.certificates.serializers import CertificateSerializer
from apps.core.dates import us_text
from apps.core.money import format_dollars

WIDTH, HEIGHT = letter  # 612 x 792 points
LEFT, RIGHT = 24, WIDTH - 24
MID = 320
FRAME = "acord25frame"

# Vertical layout (from the top of the page down).
TOP = HEIGHT - 24
HEADER_BOTTOM = TOP - 40
DISCLAIMER_BOTTOM = HEADER_BOTTOM - 34
NOTICE_BOTTOM = DISCLAIMER_BOTTOM - 30
PRODUCER_BOTTOM = NOTICE_BOTTOM - 78
INSURED_BOTTOM = PRODUCER_BOTTOM - 66
COVERAGES_HEAD_BOTTOM = INSURED_BOTTOM - 28
TABLE_HEAD_BOTTOM = COVERAGES_HEAD_BOTTOM - 18
TABLE_BOTTOM = 250
DESCRIPTION_BOTTOM = 150
HOLDER_BOTTOM = 60
MIN_SCALE = 0.75  # the smallest coverage rows: limit names in 4.1-point type
COLUMNS = [LEFT, 46, 190, 214, 238, 350, 400, 450, RIGHT]  # INSR | TYPE | ADDL | SUBR | ...
COLUMN_HEADS = [
    "INSR\nLTR",
    "TYPE OF INSURANCE",
    "ADDL\nINSD",
    "SUBR\nWVD",
    "POLICY NUMBER",
    "POLICY EFF\n(MM/DD/YYYY)",
    "POLICY EXP\n(MM/DD/YYYY)",
    "LIMITS",
]


FONTS = Path(__file__).resolve().parent / "fonts"
UNICODE_FONTS = {"regular": "DejaVuSans", "bold": "DejaVuSans-Bold"}
CJK_FONTS = {"HANGUL": "HYSMyeongJo-Medium", "HIRAGANA": "HeiseiMin-W3", "KATAKANA": "HeiseiMin-W3"}
CJK_HAN = "STSong-Light"


@functools.cache
def _register_unicode_fonts() -> None:
    """Loaded at the first text that needs them (parsing the TTFs takes a moment)."""
    for name in UNICODE_FONTS.values():
        pdfmetrics.registerFont(TTFont(name, FONTS / f"{name}.ttf"))
    for name in {*CJK_FONTS.values(), CJK_HAN}:
        pdfmetrics.registerFont(UnicodeCIDFont(name))


@functools.lru_cache(maxsize=4096)
def _font_for(char: str, font: str) -> str:
    """The font that shows `char` for text set in the standard `font`."""
    try:
        char.encode("cp1252")
        return font
    except UnicodeEncodeError:
        pass
    name = unicodedata.name(char, "")
    for script, cjk_font in CJK_FONTS.items():
        if name.startswith(script):
            return cjk_font
    if name.startswith("CJK ") or name.startswith("FULLWIDTH ") or name.startswith("IDEOGRAPHIC"):
        return CJK_HAN
    return UNICODE_FONTS["bold" if "Bold" in font else "regular"]


def _runs(text: str, font: str) -> list[tuple[str, str]] | None:
    """`text` as (font, part) runs, or None when the standard `font` shows all of it."""
    if text.isascii() or font not in pdfmetrics.standardFonts:
        return None
    try:
        text.encode("cp1252")
        return None
    except UnicodeEncodeError:
        pass
    _register_unicode_fonts()
    runs: list[tuple[str, str]] = []
    for char in text:
        run_font = _font_for(char, font)
        if runs and runs[-1][0] == run_font:
            runs[-1] = (run_font, runs[-1][1] + char)
        else:
            runs.append((run_font, char))
    return runs


class CertificateCanvas(Canvas):
    """A canvas whose text calls show every letter (the module's docstring says how)."""

    def stringWidth(self, text, fontName=None, fontSize=None):
        font, size = fontName or self._fontname, fontSize or self._fontsize
        runs = _runs(text, font)
        if runs is None:
            return super().stringWidth(text, font, size)
        return sum(pdfmetrics.stringWidth(part, run_font, size) for run_font, part in runs)

    def drawString(self, x, y, text, *args, **kwargs):
        runs = _runs(text, self._fontname)
        if runs is None:
            return super().drawString(x, y, text, *args, **kwargs)
        # One text object, its font switched run by run: the line stays one line of text.
        text_object = self.beginText(x, y)
        for run_font, part in runs:
            text_object.setFont(run_font, self._fontsize, self._leading)
            text_object.textOut(part)
        self.drawText(text_object)
        # The PDF keeps the last run's font past the text object; the canvas believes its own
        # is current and would not name it again before the next text.
        self.setFont(self._fontname, self._fontsize, self._leading)
        return None

    def drawRightString(self, x, y, text, *args, **kwargs):
        return self.drawString(x - self.stringWidth(text), y, text)

    def drawCentredString(self, x, y, text, *args, **kwargs):
        return self.drawString(x - self.stringWidth(text) / 2, y, text)


def _date(iso: str | None) -> str:
    return us_text(dt.date.fromisoformat(iso), "/") if iso else ""


def _caption(c: Canvas, x: float, y: float, text: str, size: float = 5.5) -> None:
    c.setFont("Helvetica-Bold", size)
    for n, line in enumerate(text.split("\n")):
        c.drawString(x, y - n * (size + 1), line)


def _draw_frame(c: Canvas, table_bottom: float = TABLE_BOTTOM) -> None:
    """Everything that is the same on every certificate (the coverage table ends at
    `table_bottom`, lower than usual when its rows need the room: `_layout`)."""
    c.setLineWidth(0.6)
    c.setFont("Helvetica-Bold", 16)
    c.drawString(LEFT, TOP - 22, "ACORD")
    c.setFont("Helvetica-Bold", 13)
    c.drawCentredString(WIDTH / 2 + 20, TOP - 20, "CERTIFICATE OF LIABILITY INSURANCE")
    c.rect(RIGHT - 90, HEADER_BOTTOM + 6, 90, 30)
    _caption(c, RIGHT - 86, HEADER_BOTTOM + 29, "DATE (MM/DD/YYYY)")
    c.rect(LEFT, DISCLAIMER_BOTTOM, RIGHT - LEFT, HEADER_BOTTOM - DISCLAIMER_BOTTOM)
    c.rect(LEFT, NOTICE_BOTTOM, RIGHT - LEFT, DISCLAIMER_BOTTOM - NOTICE_BOTTOM)
    c.setFont("Helvetica", 5.5)
    notice = (
        "IMPORTANT: If the certificate holder is an ADDITIONAL INSURED, the policy(ies) must have "
        "ADDITIONAL INSURED provisions or be endorsed. If SUBROGATION IS WAIVED, subject to the "
        "terms and conditions of the policy, certain policies may require an endorsement."
    )
    _wrap(c, notice, LEFT + 4, DISCLAIMER_BOTTOM - 8, RIGHT - LEFT - 8, 5.5)
    # Producer | contact and insurers
    c.rect(LEFT, PRODUCER_BOTTOM, MID - LEFT, NOTICE_BOTTOM - PRODUCER_BOTTOM)
    c.rect(MID, PRODUCER_BOTTOM, RIGHT - MID, NOTICE_BOTTOM - PRODUCER_BOTTOM)
    _caption(c, LEFT + 3, NOTICE_BOTTOM - 7, "PRODUCER")
    _caption(c, MID + 3, NOTICE_BOTTOM - 7, "CONTACT NAME:")
    _caption(c, MID + 3, NOTICE_BOTTOM - 16, "PHONE:")
    _caption(c, MID + 3, NOTICE_BOTTOM - 25, "E-MAIL:")
    c.rect(LEFT, INSURED_BOTTOM, MID - LEFT, PRODUCER_BOTTOM - INSURED_BOTTOM)
    c.rect(MID, INSURED_BOTTOM, RIGHT - MID, PRODUCER_BOTTOM + 46 - INSURED_BOTTOM)
    _caption(c, LEFT + 3, PRODUCER_BOTTOM - 7, "INSURED")
    _caption(c, MID + 3, PRODUCER_BOTTOM + 39, "INSURER(S) AFFORDING COVERAGE")
    _caption(c, RIGHT - 34, PRODUCER_BOTTOM + 39, "NAIC #")
    for n, letter_ in enumerate("ABCDEF"):
        y = PRODUCER_BOTTOM + 30 - n * 13
        _caption(c, MID + 3, y, f"INSURER {letter_} :")
        c.line(MID, y - 4, RIGHT, y - 4)
    # Coverages
    c.rect(LEFT, COVERAGES_HEAD_BOTTOM, RIGHT - LEFT, INSURED_BOTTOM - COVERAGES_HEAD_BOTTOM)
    c.setFont("Helvetica-Bold", 9)
    c.drawString(LEFT + 3, INSURED_BOTTOM - 10, "COVERAGES")
    _caption(c, LEFT + 90, INSURED_BOTTOM - 9, "CERTIFICATE NUMBER:", 6.5)
    _caption(c, RIGHT - 130, INSURED_BOTTOM - 9, "REVISION NUMBER:", 6.5)
    c.setFont("Helvetica", 5)
    _wrap(
        c,
        "THIS IS TO CERTIFY THAT THE POLICIES OF INSURANCE LISTED BELOW HAVE BEEN ISSUED TO THE "
        "INSURED NAMED ABOVE FOR THE POLICY PERIOD INDICATED, SUBJECT TO ALL THE TERMS, EXCLUSIONS "
        "AND CONDITIONS OF SUCH POLICIES. LIMITS SHOWN MAY HAVE BEEN REDUCED BY PAID CLAIMS.",
        LEFT + 3,
        INSURED_BOTTOM - 17,
        RIGHT - LEFT - 6,
        5,
    )
    c.rect(LEFT, table_bottom, RIGHT - LEFT, COVERAGES_HEAD_BOTTOM - table_bottom)
    c.line(LEFT, TABLE_HEAD_BOTTOM, RIGHT, TABLE_HEAD_BOTTOM)
    for x in COLUMNS[1:-1]:
        c.line(x, table_bottom, x, COVERAGES_HEAD_BOTTOM)
    for x, head in zip(COLUMNS, COLUMN_HEADS, strict=False):
        _caption(c, x + 2, COVERAGES_HEAD_BOTTOM - 6, head, 5)
    # Description, holder, cancellation
    c.rect(LEFT, DESCRIPTION_BOTTOM, RIGHT - LEFT, table_bottom - DESCRIPTION_BOTTOM)
    _caption(
        c,
        LEFT + 3,
        table_bottom - 7,
        "DESCRIPTION OF OPERATIONS / LOCATIONS / VEHICLES "
        "(ACORD 101, Additional Remarks Schedule, may be attached if more space is required)",
    )
    c.rect(LEFT, HOLDER_BOTTOM, MID - LEFT, DESCRIPTION_BOTTOM - HOLDER_BOTTOM)
    c.rect(MID, HOLDER_BOTTOM, RIGHT - MID, DESCRIPTION_BOTTOM - HOLDER_BOTTOM)
    _caption(c, LEFT + 3, DESCRIPTION_BOTTOM - 7, "CERTIFICATE HOLDER")
    _caption(c, MID + 3, DESCRIPTION_BOTTOM - 7, "CANCELLATION")
    _caption(c, MID + 3, HOLDER_BOTTOM + 22, "AUTHORIZED REPRESENTATIVE")
    c.setFont("Helvetica", 6)
    c.drawString(LEFT, 44, "Laid out after the ACORD 25 form; issued by the insured's agency.")
    c.setFont("Helvetica-Bold", 7)
    c.drawString(LEFT, 34, "ACORD 25 (2016/03)")


def _wrap(
    c: Canvas,
    text: str,
    x: float,
    y: float,
    width: float,
    size: float,
    font: str = "Helvetica",
    max_lines: int = 20,
) -> float:
    """Draw `text` wrapped to `width` (`_lines`); return the y below the last line."""
    c.setFont(font, size)
    for line in _lines(c, text, width, font, size)[:max_lines]:
        c.drawString(x, y, line)
        y -= size + 1.5
    return y


def _limit_lines(row: dict) -> list[tuple[str, str]]:
    lines = [(limit["name"].upper(), format_dollars(limit["amount"])) for limit in row["limits"]]
    if row.get("covered_autos"):
        lines.insert(0, ("COVERED AUTOS", row["covered_autos"].upper()))
    return lines


def _type_lines(c: Canvas, row: dict, scale: float) -> list[str]:
    width = COLUMNS[2] - COLUMNS[1] - 4
    return _lines(c, row["type_of_insurance"], width, "Helvetica-Bold", 6 * scale)[:3]


def _row_height(c: Canvas, row: dict, scale: float = 1.0) -> float:
    """A coverage row's height: its limit lines (two at least) or its type's lines."""
    limits = max(2, len(_limit_lines(row))) * 8 + 4
    kind = 4.5 + 7.5 * len(_type_lines(c, row, scale))
    return max(limits, kind) * scale


def _draw_row(c: Canvas, row: dict, top: float, scale: float = 1.0) -> float:
    """One coverage row, its type drawn `scale` times the full size; returns its bottom."""
    limits = _limit_lines(row)
    first = top - 9 * scale
    c.setFont("Helvetica-Bold", 7 * scale)
    c.drawString(COLUMNS[0] + 6, first, row["insurer_letter"])
    c.setFont("Helvetica-Bold", 6 * scale)
    for n, line in enumerate(_type_lines(c, row, scale)):
        c.drawString(COLUMNS[1] + 2, first - n * 7.5 * scale, line)
    c.setFont("Helvetica", 7 * scale)
    if row["additional_insured"]:
        c.drawString(COLUMNS[2] + 8, first, "Y")
    if row["subrogation_waived"]:
        c.drawString(COLUMNS[3] + 8, first, "Y")
    width = COLUMNS[5] - COLUMNS[4] - 4
    _fit_line(c, COLUMNS[4] + 2, first, row["policy_number"] or "", width, 7 * scale)
    c.drawString(COLUMNS[5] + 2, first, _date(row["effective_date"]))
    c.drawString(COLUMNS[6] + 2, first, _date(row["expiration_date"]))
    for n, (name, amount) in enumerate(limits):
        y = first - n * 8 * scale
        c.setFont("Helvetica", 5.5 * scale)
        c.drawString(COLUMNS[7] + 2, y, name[:34])
        c.setFont("Helvetica", 6.5 * scale)
        c.drawRightString(RIGHT - 3, y, amount)
    bottom = top - _row_height(c, row, scale)
    c.setLineWidth(0.3)
    c.line(LEFT, bottom, RIGHT, bottom)
    c.setLineWidth(0.6)
    return bottom


def _layout(c: Canvas, rows: list[dict], description: str) -> tuple[float, float, int]:
    """How the coverage rows fit the page: where the table ends, the scale its rows are drawn
    at, and how many are on it (the rest continue on the remarks page, in order).

    At full size the table ends at TABLE_BOTTOM. When its rows need more, it takes what the
    description below does not use (one line kept for the remarks page's mention), then its
    rows are drawn smaller, down to MIN_SCALE; only rows past that go to a second page."""
    needed = sum(_row_height(c, row) for row in rows)
    if needed <= TABLE_HEAD_BOTTOM - TABLE_BOTTOM:
        return TABLE_BOTTOM, 1.0, len(rows)
    width = RIGHT - LEFT - 12
    description_lines = min(10, len(_lines(c, description, width, "Helvetica", 7))) + 1
    lowest = min(TABLE_BOTTOM, DESCRIPTION_BOTTOM + 20 + description_lines * 8.5)
    table_bottom = max(lowest, TABLE_HEAD_BOTTOM - needed)
    room = TABLE_HEAD_BOTTOM - table_bottom
    scale = 1.0
    while scale > MIN_SCALE and sum(_row_height(c, row, scale) for row in rows) > room:
        scale = round(scale - 0.05, 2)
    used, shown = 0.0, 0
    for row in rows:
        used += _row_height(c, row, scale)
        if used > room:
            break
        shown += 1
    return table_bottom, scale, shown


def _lines(c: Canvas, text: str, width: float, font: str, size: float) -> list[str]:
    """`text`'s lines wrapped to `width`, a word longer than the width cut where it must be."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split():
            candidate = f"{line} {word}".strip()
            if c.stringWidth(candidate, font, size) <= width:
                line = candidate
                continue
            if line:
                lines.append(line)
            while c.stringWidth(word, font, size) > width:
                cut = len(word) - 1
                while cut > 1 and c.stringWidth(word[:cut], font, size) > width:
                    cut -= 1
                lines.append(word[:cut])
                word = word[cut:]
            line = word
        lines.append(line)
    return lines


def _text_block(
    c: Canvas, text: str, x: float, y: float, width: float, height: float, size: float = 7.5
) -> None:
    """`text` in the box below (x, y), `width` by `height`: wrapped, in smaller type when it
    needs more lines than the box holds at `size` (down to 5 points), and cut with an
    ellipsis if even that is not enough. Nothing runs out of its box."""
    font = "Helvetica"
    while True:
        lines = _lines(c, text, width, font, size)
        fits = int(height // (size + 2)) or 1
        if len(lines) <= fits or size <= 5:
            break
        size -= 0.5
    if len(lines) > fits:
        lines = lines[:fits]
        last = lines[-1]
        while last and c.stringWidth(last + "…", font, size) > width:
            last = last[:-1]
        lines[-1] = last + "…"
    c.setFont(font, size)
    for n, line in enumerate(lines):
        c.drawString(x, y - n * (size + 2), line)


def _fit_line(c: Canvas, x: float, y: float, text: str, width: float, size: float) -> None:
    """One line in `width`: in smaller type if need be (down to 4.5 points), then cut."""
    font = c._fontname
    while size > 4.5 and c.stringWidth(text, font, size) > width:
        size -= 0.5
    while len(text) > 1 and c.stringWidth(text, font, size) > width:
        text = text[:-2] + "…"
    previous = c._fontsize
    c.setFont(font, size)
    c.drawString(x, y, text)
    c.setFont(font, previous)


def certificate_pdf(certificate) -> bytes:
    """The PDF of a built certificate (the admin's downloads, the demo seed), drawn from its
    rendered data as the API's PDF is."""
    return render_certificate_pdf(CertificateSerializer(certificate).data)


def _description(cert: dict) -> str:
    description = cert["description_of_operations"]
    if cert["vehicles"] and cert["vehicle_count"] > 1:
        shown = cert["vehicles"][:6]
        description += "\nScheduled units: " + "; ".join(
            f"{v['year']} {v['make']} unit {v['unit']} VIN {v['vin']}" for v in shown
        )
        if cert["vehicle_count"] > len(shown):
            description += f"; and {cert['vehicle_count'] - len(shown)} more on file."
    return description + f"\nCoverage as of {_date(cert['as_of'])}."


def render_certificate_pdf(cert: dict) -> bytes:
    """The certificate (the builder's dictionary, snake_case keys) as PDF bytes."""
    buffer = io.BytesIO()
    c = CertificateCanvas(buffer, pagesize=letter, pageCompression=1)
    c.setTitle(f"ACORD 25 certificate {cert['certificate_number']}")
    c.setAuthor(cert["producer"]["name"])
    c.setSubject(f"Certificate of liability insurance for {cert['insured']['name']}")
    description = _description(cert)
    rows = cert["coverages"]
    table_bottom, scale, shown = _layout(c, rows, description)
    overflow = rows[shown:]
    if overflow or cert["additional_remarks"]:
        description += "\nSee the Additional Remarks page for further insurers and coverages."
    c.beginForm(FRAME)
    _draw_frame(c, table_bottom)
    c.endForm()
    c.doForm(FRAME)

    c.setFont("Helvetica", 9)
    c.drawString(RIGHT - 84, HEADER_BOTTOM + 11, _date(cert["date_issued"]))
    _wrap(c, cert["disclaimer"], LEFT + 4, HEADER_BOTTOM - 8, RIGHT - LEFT - 8, 5.5)
    producer, insured = cert["producer"], cert["insured"]
    _text_block(
        c,
        f"{producer['name']}\n{producer['address']}",
        LEFT + 6,
        NOTICE_BOTTOM - 17,
        MID - LEFT - 12,
        NOTICE_BOTTOM - 17 - PRODUCER_BOTTOM,
    )
    c.setFont("Helvetica", 7)
    for n, field in enumerate(("contact_name", "phone", "email")):
        _fit_line(c, MID + 52, NOTICE_BOTTOM - 7 - n * 9, producer[field], RIGHT - MID - 56, 7)
    insured_text = f"{insured['name']}\n{insured['address']}"
    if insured.get("dot"):
        insured_text += f"\nUSDOT {insured['dot']}"
    _text_block(
        c,
        insured_text,
        LEFT + 6,
        PRODUCER_BOTTOM - 17,
        MID - LEFT - 12,
        PRODUCER_BOTTOM - 17 - INSURED_BOTTOM - 3,
    )
    for n, insurer in enumerate(cert["insurers"][:6]):
        y = PRODUCER_BOTTOM + 30 - n * 13
        c.setFont("Helvetica", 7)
        naic = c.stringWidth(insurer["naic"]) + 8
        _fit_line(c, MID + 44, y, insurer["name"], RIGHT - 4 - naic - MID - 44, 7)
        c.drawRightString(RIGHT - 4, y, insurer["naic"])
    c.setFont("Helvetica-Bold", 7)
    c.drawString(LEFT + 176, INSURED_BOTTOM - 9, cert["certificate_number"])

    top = TABLE_HEAD_BOTTOM
    for row in rows[:shown]:
        top = _draw_row(c, row, top, scale)
    _wrap(c, description, LEFT + 6, table_bottom - 17, RIGHT - LEFT - 12, 7, max_lines=10)
    holder = cert["certificate_holder"]
    _text_block(
        c,
        f"{holder['name']}\n{holder['address']}",
        LEFT + 6,
        DESCRIPTION_BOTTOM - 20,
        MID - LEFT - 12,
        DESCRIPTION_BOTTOM - 20 - HOLDER_BOTTOM,
        8,
    )
    _wrap(c, cert["cancellation"], MID + 4, DESCRIPTION_BOTTOM - 16, RIGHT - MID - 8, 6.5)
    c.setFont("Helvetica-Oblique", 8)
    c.drawString(MID + 6, HOLDER_BOTTOM + 8, cert["authorized_representative"])
    c.setFont("Helvetica", 6.5)
    c.drawRightString(
        RIGHT,
        34,
        f"Certificate {cert['certificate_number']} - verify at GET {cert['verify_at']}",
    )

    remarks = [*overflow]
    for section in cert["additional_remarks"]:
        remarks.extend(section["coverages"])
    if remarks:
        _remarks_page(c, cert, remarks)
    c.showPage()
    c.save()
    return buffer.getvalue()


def _remarks_page(c: Canvas, cert: dict, rows: list[dict]) -> None:
    c.showPage()
    c.setFont("Helvetica-Bold", 12)
    c.drawString(LEFT, TOP - 16, "ADDITIONAL REMARKS SCHEDULE")
    c.setFont("Helvetica", 8)
    c.drawString(
        LEFT,
        TOP - 30,
        f"Attached to ACORD 25 certificate {cert['certificate_number']} "
        f"for {cert['insured']['name']}",
    )
    y = TOP - 50
    extra = [i for s in cert["additional_remarks"] for i in s["insurers"]]
    for insurer in extra:
        c.drawString(
            LEFT, y, f"INSURER {insurer['letter']}: {insurer['name']}  NAIC {insurer['naic']}"
        )
        y -= 11
    y -= 6
    c.line(LEFT, y, RIGHT, y)
    for row in rows:
        if y < 80:
            c.showPage()
            y = TOP - 20
        y = _draw_row(c, row, y)
