"""memlake report's page parses as XHTML (ElementTree), each inline <svg> has
polylines for native and memlake, and the summary table is there.
Usage: report_is_wellformed.py PAGE.html"""
import sys
import xml.etree.ElementTree as E

H = "{http://www.w3.org/1999/xhtml}"
S = "{http://www.w3.org/2000/svg}"
root = E.parse(sys.argv[1]).getroot()
assert root.tag == H + "html", root.tag
svgs = root.findall(".//" + S + "svg")
assert len(svgs) >= 2, f"{len(svgs)} inline svg elements"
for i, svg in enumerate(svgs):
    # Each inline SVG is a document of its own too (as `bench copy --svg` writes).
    E.fromstring(E.tostring(svg))
    classes = [p.get("class", "") for p in svg.iter(S + "polyline")]
    for who in ("native", "memlake"):
        lines = [p for p in svg.iter(S + "polyline") if who in p.get("class", "").split()]
        assert lines, f"svg {i}: no {who} polyline (classes {classes})"
        for p in lines:
            pts = p.get("points").split()
            assert 2 <= len(pts) <= 4000, f"svg {i}: {len(pts)} points"
            for xy in pts:
                x, y = (float(v) for v in xy.split(","))
    ticks = [t.text for t in svg.iter(S + "text") if t.text and t.text.endswith(" GiB")]
    assert len(ticks) >= 2, f"svg {i}: y ticks {ticks}"
tables = [t for t in root.iter(H + "table") if t.get("id") == "summary"]
assert tables, "no summary table"
rows = {r.find(H + "th").text: [d.text for d in r.findall(H + "td")] for r in tables[0].iter(H + "tr") if r.find(H + "th") is not None}
for key in ("peak live (requested)", "peak reserved", "utilization (peak live / peak reserved)"):
    assert key in rows, f"summary has no row {key!r}: {list(rows)}"
print("well-formed:", len(svgs), "svg,", "peak reserved native/memlake:", rows["peak reserved"])
