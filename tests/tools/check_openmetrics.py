#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_openmetrics.py - checks an OpenMetrics text exposition (rdps-stat --prometheus).

usage: check_openmetrics.py FILE ['name{label="v",...} == VALUE' ...]
Checks the grammar rdps-stat uses: '# TYPE' then '# HELP' before a family's samples, families
contiguous and declared once, counter samples named FAMILY_total and gauges FAMILY, label values
escaped, no two samples with the same name and labels, '# EOF' last. Each further argument
asserts one sample's value (labels in any order). With python3-prometheus-client installed the
file is also parsed by its OpenMetrics parser. Exits 1 on the first violation.
"""
import re
import sys

LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:' + LABEL + r')(?:,' + LABEL +
                    r')*\})? (-?[0-9.eE+]+|NaN|[+-]Inf)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')


def fail(msg):
    print(f"check_openmetrics: FAIL {msg}")
    sys.exit(1)


def labels_of(text):
    return tuple(sorted(LABEL_RE.findall(text or "")))


def parse(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    if lines[-1] != "":
        fail("the exposition does not end with a newline")
    lines = lines[:-1]
    if not lines or lines[-1] != "# EOF":
        fail("the last line is not '# EOF'")
    families, current, samples = {}, None, {}
    for n, line in enumerate(lines[:-1], 1):
        if line.startswith("# TYPE "):
            parts = line.split(" ")
            if len(parts) != 4 or parts[3] not in ("counter", "gauge"):
                fail(f"line {n}: bad TYPE line: {line}")
            name = parts[2]
            if name in families:
                fail(f"line {n}: family {name} declared twice (families must be contiguous)")
            if name.endswith("_total"):
                fail(f"line {n}: family name {name} ends in _total")
            families[name] = parts[3]
            current = name
            continue
        if line.startswith("# HELP "):
            if current is None or not line.startswith(f"# HELP {current} "):
                fail(f"line {n}: HELP not right after its family's TYPE: {line}")
            continue
        if line.startswith("#"):
            fail(f"line {n}: unexpected comment: {line}")
        m = SAMPLE.match(line)
        if not m:
            fail(f"line {n}: not a sample: {line!r}")
        name, labels, value = m.group(1), m.group(2), m.group(3)
        want = current + ("_total" if families.get(current) == "counter" else "")
        if name != want:
            fail(f"line {n}: sample {name} in family {current} ({families.get(current)}), "
                 f"expected {want}")
        key = (name, labels_of(labels))
        if key in samples:
            fail(f"line {n}: duplicate sample {name}{labels}")
        samples[key] = float(value)
    return samples


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = sys.argv[1]
    samples = parse(path)
    try:
        from prometheus_client.openmetrics import parser
    except ImportError:
        sys.path.append("/usr/lib/python3/dist-packages")  # Debian's, under another python3
        try:
            from prometheus_client.openmetrics import parser
        except ImportError:
            parser = None
    if parser is not None:
        try:
            list(parser.text_string_to_metric_families(open(path, encoding="utf-8").read()))
        except Exception as e:  # the parser's own message says what is wrong
            fail(f"prometheus_client's OpenMetrics parser: {e}")
        print("check_openmetrics: prometheus_client's parser accepts it")
    for cond in sys.argv[2:]:
        m = re.fullmatch(r'\s*([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s*==\s*(\S+)\s*', cond)
        if not m:
            fail(f"bad condition {cond!r}")
        key = (m.group(1), labels_of(m.group(2)))
        if key not in samples:
            fail(f"no sample {m.group(1)}{m.group(2) or ''}")
        if samples[key] != float(m.group(3)):
            fail(f"{cond}: the value is {samples[key]:g}")
        print(f"check_openmetrics: ok {cond}")
    print(f"check_openmetrics: {len(samples)} samples well formed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
