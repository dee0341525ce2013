from __future__ import annotations

from socialrag.names import normalize_person_name, normalize_venue


def test_person_names_fold_accents_and_spacing() -> None:
    assert normalize_person_name("Hinrich  Schütze") == normalize_person_name("hinrich schutze")
    assert normalize_person_name("Ivan Vulić") == "ivan vulic"


def test_venue_series_share_a_key_across_years() -> None:
    acl58, _ = normalize_venue(
        "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics"
    )
    acl57, _ = normalize_venue(
        "Proceedings of the 57th Annual Meeting of the Association for Computational Linguistics"
    )
    acl56, _ = normalize_venue(
        "Proceedings of the 56th Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)"
    )
    assert acl58 == acl57 == acl56


def test_emnlp_years_and_acronym_display() -> None:
    k20, d20 = normalize_venue(
        "Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)"
    )
    k18, _ = normalize_venue("Proceedings of the 2018 Conference on Empirical Methods in Natural Language Processing")
    assert k20 == k18
    assert d20 == "EMNLP"


def test_lrec_acronym_with_year_suffix() -> None:
    _, display = normalize_venue(
        "Proceedings of the Tenth International Conference on Language Resources and Evaluation (LREC'16)"
    )
    assert display == "LREC"


def test_different_series_stay_apart() -> None:
    a, _ = normalize_venue("Proceedings of the 13th International Workshop on Semantic Evaluation")
    b, _ = normalize_venue("Proceedings of the Fifth Conference on Machine Translation")
    assert a != b
