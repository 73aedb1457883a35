"""One kind per log-line template for real-world variable tokens (docs/adr/0057 and its amendments).

A trial flood of 4,000 lines in 5 templates stored 9 kinds: Kubernetes pod suffixes of digits only, of hex
with letters and of letters only were masked three ways, and a trace id of digits only took its closing
bracket with it.
"""

from __future__ import annotations

import random
import string

from hypothesis import given
from hypothesis import strategies as st

from mission_memory.operations.event_template import event_template, kind_key


def _kinds(texts: list[str], type_: str = "ERROR", sector: str = "k8s") -> set[str]:
    return {kind_key(type_, sector, text) for text in texts}


def test_pod_suffixes_of_any_shape_are_one_kind() -> None:
    suffixes = ["80727", "5aae2", "cdbbb", "ffddf", "x2k4p", "bcdea", "568f4", "03c55"]
    texts = [f"Container checkout-api in pod checkout-api-{s} OOMKilled (exit 137), restart {n}"
             for n, s in enumerate(suffixes)]
    assert len(_kinds(texts)) == 1
    # a pod name outside the "pod" key: a generated suffix of consonants or digits is variable too
    bare = [f"Back-off restarting failed container in checkout-api-7d9f8b6c5d-{s}" for s in ("cdbbb", "x2k4p", "80727")]
    assert len(_kinds(bare)) == 1


def test_trace_and_span_ids_of_any_digit_or_hex_shape_are_one_kind() -> None:
    ids = ["88e8e72999dbf760", "1234567890123456", "abcdefabcdefabcd", "06210e6f04f1fb33"]
    texts = [f"upstream payments timed out after {900 + n} ms (trace {t})" for n, t in enumerate(ids)]
    assert len(_kinds(texts, sector="checkout")) == 1
    keyed = [f"request failed trace_id={t} span_id={t[:8]} status=503" for t in ids]
    assert len(_kinds(keyed)) == 1


def test_uuids_ips_durations_and_numbers_with_units_are_one_kind() -> None:
    texts = ["GET /api/v1/cart/70 200 1360ms 10.0.13.174", "GET /api/v1/cart/98 200 2s 10.0.64.140",
             "GET /api/v1/cart/7 200 1.5s 10.0.1.1"]
    assert len(_kinds(texts)) == 1
    uuids = [f"instance {u} spawned in 12.5 seconds" for u in
             ("78dc1847-8848-49cc-933e-9239b12c9dcf", "ae3a1b5d-eec1-45bb-b76a-c59d83b1471f")]
    assert len(_kinds(uuids)) == 1


def test_distinct_templates_stay_apart() -> None:
    """Precision: masking never merges lines that differ in a word."""
    assert event_template("Container checkout-api in pod checkout-api-cdbbb OOMKilled") != event_template(
        "Container checkout-api in pod checkout-api-cdbbb Evicted")
    assert event_template("upstream payments timed out (trace 12)") != event_template(
        "upstream orders timed out (trace 12)")
    # words of a name stay: a hyphenated word with vowels is not a generated suffix
    assert event_template("restarting checkout-api-proxy") != event_template("restarting checkout-api-worker")
    # real loghub lines (Proxifier, HDFS): host names holding "id" are not keyed values
    assert event_template("cidian.youdao.com:80 open through proxy proxy.cse.cuhk.edu.hk:5070 HTTPS") == \
        event_template("www.baidu.com:80 open through proxy proxy.cse.cuhk.edu.hk:5070 HTTPS")
    assert event_template("Received block blk_-5704899712662113150 of size 67108864 from /10.251.91.229") == \
        event_template("Received block blk_3587508140051953248 of size 67108864 from /10.251.42.84")


@given(st.integers(min_value=0, max_value=2**32))
def test_random_kubernetes_suffixes_never_split_the_kind(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet Kubernetes draws generated-name suffixes from
    hexdigits = string.hexdigits.lower()[:16]
    suffix = "".join(rng.choice(alphabet) for _ in range(5))
    trace = "".join(rng.choice(hexdigits) for _ in range(16))
    a = f"Container api in pod api-{suffix} OOMKilled (trace {trace})"
    assert event_template(a) == event_template("Container api in pod api-80727 OOMKilled (trace 1234567890123456)")
    assert event_template(event_template(a)) == event_template(a)  # idempotent


@given(st.text(alphabet=st.sampled_from(list("abcdefk0129xyz-_ :=()[]/.,\"'idpotracespan\t")), max_size=80))
def test_the_template_of_a_template_is_itself(text: str) -> None:
    """The kind is computed from the template of the stored text; masking what is already masked
    changes nothing, so an event replayed from its stored kind lands in the same kind."""
    once = event_template(text)
    assert event_template(once) == once
