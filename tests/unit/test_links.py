"""Table-driven tests of paper-link parsing on real-world URL forms."""

from __future__ import annotations

import pytest

from socialrag.knowledge.links import find_paper_refs, parse_paper_url

PAPER_URLS: list[tuple[str, str]] = [
    # arXiv
    ("https://arxiv.org/abs/2401.01234", "arxiv:2401.01234"),
    ("https://arxiv.org/abs/2401.01234v2", "arxiv:2401.01234"),
    ("http://arxiv.org/abs/1706.03762v7", "arxiv:1706.03762"),
    ("https://arxiv.org/pdf/2401.01234", "arxiv:2401.01234"),
    ("https://arxiv.org/pdf/2401.01234v3.pdf", "arxiv:2401.01234"),
    ("https://arxiv.org/pdf/1810.04805.pdf", "arxiv:1810.04805"),
    ("https://arxiv.org/html/2402.12345v1", "arxiv:2402.12345"),
    ("https://www.arxiv.org/abs/2310.06825", "arxiv:2310.06825"),
    ("https://export.arxiv.org/abs/2310.06825", "arxiv:2310.06825"),
    ("https://arxiv.org/abs/hep-th/9901001", "arxiv:hep-th/9901001"),
    ("https://arxiv.org/abs/hep-th/9901001v2", "arxiv:hep-th/9901001"),
    ("https://arxiv.org/pdf/cond-mat/0211034v1.pdf", "arxiv:cond-mat/0211034"),
    ("https://arxiv.org/abs/math.GT/0309136", "arxiv:math.gt/0309136"),
    ("https://arxiv.org/abs/0704.0001", "arxiv:0704.0001"),
    ("https://arxiv.org/abs/2401.01234?context=cs.CL", "arxiv:2401.01234"),
    ("https://arxiv.org/abs/2401.01234#", "arxiv:2401.01234"),
    ("https://ar5iv.labs.arxiv.org/html/1910.10683", "arxiv:1910.10683"),
    ("https://ar5iv.org/abs/1910.10683", "arxiv:1910.10683"),
    # arXiv mirrors
    ("https://huggingface.co/papers/2401.01234", "arxiv:2401.01234"),
    ("https://huggingface.co/papers/2305.18290", "arxiv:2305.18290"),
    ("https://www.alphaxiv.org/abs/2401.01234", "arxiv:2401.01234"),
    ("https://www.alphaxiv.org/overview/2406.04692v2", "arxiv:2406.04692"),
    ("https://alphaxiv.org/abs/2401.01234v1", "arxiv:2401.01234"),
    # DOIs
    ("https://doi.org/10.1145/3313831.3376727", "doi:10.1145/3313831.3376727"),
    ("http://dx.doi.org/10.1038/nature14539", "doi:10.1038/nature14539"),
    ("https://doi.org/10.1016/J.ARTINT.2018.07.007", "doi:10.1016/j.artint.2018.07.007"),
    ("https://doi.org/10.1007%2F978-3-030-58452-8_13", "doi:10.1007/978-3-030-58452-8_13"),
    ("https://doi.org/10.18653/v1/2020.acl-main.1", "acl:2020.acl-main.1"),
    ("https://doi.org/10.18653/v1/P19-1001", "acl:P19-1001"),
    ("https://doi.org/10.48550/arXiv.2303.08774", "arxiv:2303.08774"),
    ("https://doi.org/10.1101/2020.03.01.972935", "doi:10.1101/2020.03.01.972935"),
    # ACL Anthology
    ("https://aclanthology.org/2020.acl-main.1/", "acl:2020.acl-main.1"),
    ("https://aclanthology.org/2020.acl-main.1", "acl:2020.acl-main.1"),
    ("https://aclanthology.org/2020.acl-main.1.pdf", "acl:2020.acl-main.1"),
    ("https://aclanthology.org/2021.findings-acl.12.pdf", "acl:2021.findings-acl.12"),
    ("https://aclanthology.org/2020.emnlp-main.550.bib", "acl:2020.emnlp-main.550"),
    ("https://aclanthology.org/P19-1001/", "acl:P19-1001"),
    ("https://aclanthology.org/N19-1423.pdf", "acl:N19-1423"),
    ("https://www.aclweb.org/anthology/P19-1001", "acl:P19-1001"),
    ("https://www.aclweb.org/anthology/2020.acl-main.463.pdf", "acl:2020.acl-main.463"),
    ("http://aclweb.org/anthology/D18-1259", "acl:D18-1259"),
    ("https://www.aclweb.org/anthology/P/P18/P18-1031.pdf", "acl:P18-1031"),
    # OpenReview
    ("https://openreview.net/forum?id=rJl-b3RcF7", "openreview:rJl-b3RcF7"),
    ("https://openreview.net/pdf?id=YicbFdNTTy", "openreview:YicbFdNTTy"),
    ("https://openreview.net/forum?id=YicbFdNTTy&noteId=abc123", "openreview:YicbFdNTTy"),
    # Semantic Scholar
    (
        "https://www.semanticscholar.org/paper/Attention-is-All-you-Need-Vaswani-Shazeer/"
        "204e3073870fae3d05bcbc2f6a8e263d9b72e776",
        "s2:204e3073870fae3d05bcbc2f6a8e263d9b72e776",
    ),
    (
        "https://www.semanticscholar.org/paper/204e3073870fae3d05bcbc2f6a8e263d9b72e776",
        "s2:204e3073870fae3d05bcbc2f6a8e263d9b72e776",
    ),
    ("https://api.semanticscholar.org/CorpusID:13756489", "corpus:13756489"),
    (
        "https://www.semanticscholar.org/reader/204e3073870fae3d05bcbc2f6a8e263d9b72e776",
        "s2:204e3073870fae3d05bcbc2f6a8e263d9b72e776",
    ),
    ("https://www.semanticscholar.org/arxiv/2401.01234", "arxiv:2401.01234"),
    # ACM DL
    ("https://dl.acm.org/doi/10.1145/3313831.3376727", "doi:10.1145/3313831.3376727"),
    ("https://dl.acm.org/doi/abs/10.1145/3411764.3445188", "doi:10.1145/3411764.3445188"),
    ("https://dl.acm.org/doi/pdf/10.1145/3411764.3445188", "doi:10.1145/3411764.3445188"),
    ("https://dl.acm.org/doi/fullHtml/10.1145/3544548.3581503", "doi:10.1145/3544548.3581503"),
    ("https://dl.acm.org/citation.cfm?id=3025453", "acm:3025453"),
    # bioRxiv / medRxiv
    ("https://www.biorxiv.org/content/10.1101/2020.03.01.972935v2", "doi:10.1101/2020.03.01.972935"),
    ("https://www.biorxiv.org/content/10.1101/2020.03.01.972935v1.full.pdf", "doi:10.1101/2020.03.01.972935"),
    ("https://www.medrxiv.org/content/10.1101/2020.04.14.20062463v1.full", "doi:10.1101/2020.04.14.20062463"),
    ("https://www.biorxiv.org/content/early/2019/01/05/513051", "doi:10.1101/513051"),
    # PubMed / PMC
    ("https://pubmed.ncbi.nlm.nih.gov/32015507/", "pmid:32015507"),
    ("https://www.ncbi.nlm.nih.gov/pubmed/32015507", "pmid:32015507"),
    ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC7092803/", "pmcid:PMC7092803"),
    ("https://pmc.ncbi.nlm.nih.gov/articles/PMC7092803/", "pmcid:PMC7092803"),
    ("https://europepmc.org/article/MED/32015507", "pmid:32015507"),
    # NeurIPS
    (
        "https://papers.nips.cc/paper/2020/hash/1457c0d6bfcb4967418bfb8ac142f64a-Abstract.html",
        "neurips:2020/1457c0d6bfcb4967418bfb8ac142f64a",
    ),
    (
        "https://proceedings.neurips.cc/paper_files/paper/2022/file/b1efde53be364a73914f58805a001731-Paper-Conference.pdf",
        "neurips:2022/b1efde53be364a73914f58805a001731",
    ),
    (
        "https://proceedings.neurips.cc/paper/2017/file/3f5ee243547dee91fbd053c1c4a845aa-Paper.pdf",
        "neurips:2017/3f5ee243547dee91fbd053c1c4a845aa",
    ),
    ("https://papers.nips.cc/paper/7181-attention-is-all-you-need.pdf", "neurips:7181"),
    # PMLR
    ("https://proceedings.mlr.press/v139/radford21a.html", "pmlr:v139/radford21a"),
    ("https://proceedings.mlr.press/v139/radford21a/radford21a.pdf", "pmlr:v139/radford21a"),
    ("http://proceedings.mlr.press/v37/ioffe15.html", "pmlr:v37/ioffe15"),
    # CVF
    (
        "https://openaccess.thecvf.com/content/CVPR2022/html/Rombach_High-Resolution_Image_Synthesis_With_Latent_Diffusion_Models_CVPR_2022_paper.html",
        "cvf:Rombach_High-Resolution_Image_Synthesis_With_Latent_Diffusion_Models_CVPR_2022_paper",
    ),
    (
        "https://openaccess.thecvf.com/content/CVPR2022/papers/Rombach_High-Resolution_Image_Synthesis_With_Latent_Diffusion_Models_CVPR_2022_paper.pdf",
        "cvf:Rombach_High-Resolution_Image_Synthesis_With_Latent_Diffusion_Models_CVPR_2022_paper",
    ),
    (
        "https://openaccess.thecvf.com/content_cvpr_2016/html/He_Deep_Residual_Learning_CVPR_2016_paper.html",
        "cvf:He_Deep_Residual_Learning_CVPR_2016_paper",
    ),
    # IEEE Xplore
    ("https://ieeexplore.ieee.org/document/7780459", "ieee:7780459"),
    ("https://ieeexplore.ieee.org/abstract/document/7780459/", "ieee:7780459"),
    ("https://ieeexplore.ieee.org/stamp/stamp.jsp?arnumber=7780459", "ieee:7780459"),
    ("https://ieeexplore.ieee.org/stamp/stamp.jsp?tp=&arnumber=7780459", "ieee:7780459"),
    # Springer and Nature
    ("https://link.springer.com/article/10.1007/s11263-015-0816-y", "doi:10.1007/s11263-015-0816-y"),
    ("https://link.springer.com/chapter/10.1007/978-3-030-58452-8_13", "doi:10.1007/978-3-030-58452-8_13"),
    ("https://link.springer.com/content/pdf/10.1007/s11263-015-0816-y.pdf", "doi:10.1007/s11263-015-0816-y"),
    ("https://www.nature.com/articles/s41586-021-03819-2", "doi:10.1038/s41586-021-03819-2"),
    ("https://www.nature.com/articles/nature14539", "doi:10.1038/nature14539"),
    ("https://www.nature.com/articles/s41586-021-03819-2.pdf", "doi:10.1038/s41586-021-03819-2"),
    # a DOI in the query string or after /doi/ on any publisher
    (
        "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0185993",
        "doi:10.1371/journal.pone.0185993",
    ),
    (
        "https://journals.plos.org/ploscompbiol/article/file?id=10.1371/journal.pcbi.1005510&type=printable",
        "doi:10.1371/journal.pcbi.1005510",
    ),
    ("https://onlinelibrary.wiley.com/doi/full/10.1111/cogs.12481", "doi:10.1111/cogs.12481"),
    ("https://www.tandfonline.com/doi/abs/10.1080/01621459.2017.1285773", "doi:10.1080/01621459.2017.1285773"),
    ("https://www.science.org/doi/10.1126/science.aaa8415", "doi:10.1126/science.aaa8415"),
    ("https://www.pnas.org/doi/pdf/10.1073/pnas.1907367117", "doi:10.1073/pnas.1907367117"),
    ("https://example.org/lookup?doi=10.5555/12345678", "doi:10.5555/12345678"),
    # Semantic Scholar's PDF mirror: the two path parts are the paper's 40-hex id
    (
        "https://pdfs.semanticscholar.org/0b44/fcbeea9415d400c5f5789d6b892b6f98daff.pdf",
        "s2:0b44fcbeea9415d400c5f5789d6b892b6f98daff",
    ),
    # the ACM DL's old PDF delivery links carry the article id
    ("http://delivery.acm.org/10.1145/2950000/2939785/p785-chen.pdf?ip=1.2.3.4&id=2939785&acc=OPEN", "acm:2939785"),
    # IJCAI proceedings: a DOI from 2017 on, the proceedings number before
    ("https://www.ijcai.org/proceedings/2019/0123.pdf", "doi:10.24963/ijcai.2019/123"),
    ("https://www.ijcai.org/Proceedings/2019/123", "doi:10.24963/ijcai.2019/123"),
    ("https://www.ijcai.org/Proceedings/16/Papers/403.pdf", "ijcai:2016/403"),
    ("http://ijcai.org/Proceedings/09/Papers/123.pdf", "ijcai:2009/123"),
    # TACL's journal pages and the MIT Press
    ("https://transacl.org/ojs/index.php/tacl/article/view/1853", "tacl:1853"),
    ("https://transacl.org/index.php/tacl/article/download/1853/472", "tacl:1853"),
    ("https://direct.mit.edu/tacl/article/doi/10.1162/tacl_a_00313/43538/A-Primer", "doi:10.1162/tacl_a_00313"),
    ("https://www.mitpressjournals.org/doi/full/10.1162/tacl_a_00051", "doi:10.1162/tacl_a_00051"),
    ("https://ojs.aaai.org/index.php/AAAI/article/view/6251", "aaai:6251"),
]

NOT_PAPERS: list[str] = [
    "https://arxiv.org/list/cs.CL/recent",
    "https://arxiv.org/a/vaswani_a_1",
    "https://arxiv.org/",
    "https://github.com/huggingface/transformers",
    "https://twitter.com/someone/status/1234567890",
    "https://aclanthology.org/events/acl-2020/",
    "https://aclanthology.org/volumes/2020.acl-main/",
    "https://aclanthology.org/people/j/juho-kim/",
    "https://openreview.net/group?id=ICLR.cc/2024/Conference",
    "https://openreview.net/profile?id=~Some_One1",
    "https://huggingface.co/papers",
    "https://huggingface.co/meta-llama/Llama-2-7b",
    "https://www.semanticscholar.org/author/Juho-Kim/1234567",
    "https://www.nature.com/nature",
    "https://proceedings.mlr.press/v139/",
    "https://papers.nips.cc/",
    "https://ieeexplore.ieee.org/xpl/conhome/1000147/all-proceedings",
    "https://link.springer.com/journal/11263",
    "https://myteam.slack.com/archives/C0123ABCD/p1700000000000100",
    "https://doi.org/",
    "https://www.youtube.com/watch?v=abc",
    "https://pubmed.ncbi.nlm.nih.gov/?term=transformers",
    "https://dl.acm.org/conference/chi",
    "https://www.biorxiv.org/collection/bioinformatics",
    "https://journals.plos.org/plosone/",
    "https://journals.plos.org/plosone/search?q=transformers",
    "https://www.ijcai.org/proceedings/2019/",
    "https://transacl.org/ojs/index.php/tacl/issue/archive",
    "https://pdfs.semanticscholar.org/",
    "https://example.org/page?id=42",
    "https://onlinelibrary.wiley.com/journal/15516709",
    "not a url at all",
]


# Real links of the sites a biology or medicine lab shares, each with the identity it must become.
LIFE_SCIENCE_URLS: list[tuple[str, str]] = [
    ("https://www.biorxiv.org/content/10.1101/2020.03.01.972935v2", "doi:10.1101/2020.03.01.972935"),
    ("https://www.medrxiv.org/content/10.1101/2020.04.14.20062463v1.full", "doi:10.1101/2020.04.14.20062463"),
    ("https://pubmed.ncbi.nlm.nih.gov/32015507/", "pmid:32015507"),
    ("https://www.ncbi.nlm.nih.gov/pubmed/32015507", "pmid:32015507"),
    ("https://pmc.ncbi.nlm.nih.gov/articles/PMC7095418/", "pmcid:PMC7095418"),
    ("https://www.ncbi.nlm.nih.gov/pmc/articles/PMC7095418/pdf/41586_2020_Article_2012.pdf", "pmcid:PMC7095418"),
    ("https://europepmc.org/article/MED/32015507", "pmid:32015507"),
    ("https://europepmc.org/article/PMC/PMC7095418", "pmcid:PMC7095418"),
    ("https://www.nature.com/articles/s41586-020-2012-7", "doi:10.1038/s41586-020-2012-7"),
    ("https://www.nature.com/articles/s41586-021-03819-2.pdf", "doi:10.1038/s41586-021-03819-2"),
    ("https://www.cell.com/cell/fulltext/S0092-8674(20)30229-4", "pii:S0092867420302294"),
    ("https://www.cell.com/molecular-cell/abstract/S1097-2765(21)00111-1", "pii:S1097276521001111"),
    ("https://www.cell.com/action/showPdf?pii=S0092-8674(20)30229-4", "pii:S0092867420302294"),
    ("https://www.sciencedirect.com/science/article/pii/S0092867420302294", "pii:S0092867420302294"),
    ("https://www.sciencedirect.com/science/article/abs/pii/S0092867420302294", "pii:S0092867420302294"),
    ("https://linkinghub.elsevier.com/retrieve/pii/S0092867420302294", "pii:S0092867420302294"),
    ("https://www.thelancet.com/journals/lancet/article/PIIS0140-6736(20)30183-5/fulltext", "pii:S0140673620301835"),
    ("https://www.jbc.org/article/S0021-9258(21)00123-4/fulltext", "pii:S0021925821001234"),
    ("https://www.science.org/doi/10.1126/science.abb2507", "doi:10.1126/science.abb2507"),
    ("https://www.science.org/doi/full/10.1126/sciadv.abc1234", "doi:10.1126/sciadv.abc1234"),
    ("https://www.pnas.org/doi/10.1073/pnas.2004168117", "doi:10.1073/pnas.2004168117"),
    ("https://elifesciences.org/articles/57309", "doi:10.7554/elife.57309"),
    ("https://elifesciences.org/articles/57309v2", "doi:10.7554/elife.57309"),
    ("https://elifesciences.org/reviewed-preprints/89150", "doi:10.7554/elife.89150"),
    (
        "https://journals.plos.org/plosbiology/article?id=10.1371/journal.pbio.3000411",
        "doi:10.1371/journal.pbio.3000411",
    ),
    (
        "https://journals.plos.org/plosone/article/file?id=10.1371/journal.pone.0230405&type=printable",
        "doi:10.1371/journal.pone.0230405",
    ),
    ("https://link.springer.com/article/10.1007/s00018-020-03502-3", "doi:10.1007/s00018-020-03502-3"),
    ("https://onlinelibrary.wiley.com/doi/10.1002/jmv.25681", "doi:10.1002/jmv.25681"),
    ("https://febs.onlinelibrary.wiley.com/doi/full/10.1111/febs.15375", "doi:10.1111/febs.15375"),
    ("https://www.embopress.org/doi/full/10.15252/embj.2020105114", "doi:10.15252/embj.2020105114"),
    ("https://www.frontiersin.org/articles/10.3389/fimmu.2020.01441/full", "doi:10.3389/fimmu.2020.01441"),
    (
        "https://www.frontiersin.org/journals/immunology/articles/10.3389/fimmu.2020.01441/full",
        "doi:10.3389/fimmu.2020.01441",
    ),
    ("https://bmcbiol.biomedcentral.com/articles/10.1186/s12915-020-00833-6", "doi:10.1186/s12915-020-00833-6"),
    ("https://academic.oup.com/nar/article/doi/10.1093/nar/gkaa1100/6006196", "doi:10.1093/nar/gkaa1100"),
    ("https://academic.oup.com/nar/article/49/D1/D480/6006196", "oup:nar/6006196"),
]

LIFE_SCIENCE_NOT_PAPERS = [
    "https://www.cell.com/cell/home",
    "https://elifesciences.org/subjects/cell-biology",
    "https://www.frontiersin.org/journals/immunology",
    "https://academic.oup.com/nar",
    "https://www.sciencedirect.com/journal/cell",
    "https://www.science.org/journal/science",
    "https://bmcbiol.biomedcentral.com/articles",
    "https://www.biorxiv.org/content/early/recent",
]


@pytest.mark.parametrize(("url", "expected"), PAPER_URLS + LIFE_SCIENCE_URLS)
def test_paper_urls_become_canonical_ids(url: str, expected: str) -> None:
    ref = parse_paper_url(url)
    assert ref is not None, url
    assert ref.key == expected


@pytest.mark.parametrize("url", NOT_PAPERS + LIFE_SCIENCE_NOT_PAPERS)
def test_non_papers_are_ignored(url: str) -> None:
    assert parse_paper_url(url) is None


def test_there_are_enough_cases() -> None:
    assert len(PAPER_URLS) + len(NOT_PAPERS) >= 60


def test_slack_markup_with_label_is_kept() -> None:
    text = "Worth a read: <https://arxiv.org/abs/1706.03762v5|Attention Is All You Need> :eyes:"
    (ref,) = find_paper_refs(text)
    assert ref.key == "arxiv:1706.03762"
    assert ref.label == "Attention Is All You Need"
    assert ref.url == "https://arxiv.org/abs/1706.03762v5"


def test_label_that_is_the_url_is_dropped() -> None:
    (ref,) = find_paper_refs("<https://arxiv.org/abs/1706.03762|https://arxiv.org/abs/1706.03762>")
    assert ref.label is None


def test_escaped_ampersand_in_slack_markup() -> None:
    text = "<https://ieeexplore.ieee.org/stamp/stamp.jsp?tp=&amp;arnumber=7780459|ResNet>"
    (ref,) = find_paper_refs(text)
    assert ref.key == "ieee:7780459"
    assert ref.url == "https://ieeexplore.ieee.org/stamp/stamp.jsp?tp=&arnumber=7780459"
    assert ref.label == "ResNet"


def test_escaped_label_is_unescaped() -> None:
    (ref,) = find_paper_refs("<https://arxiv.org/abs/2401.01234|Q&amp;A &lt;survey&gt;>")
    assert ref.label == "Q&A <survey>"


@pytest.mark.parametrize(
    "text",
    [
        "see https://arxiv.org/abs/2401.01234.",
        "see https://arxiv.org/abs/2401.01234, it is good",
        "(https://arxiv.org/abs/2401.01234)",
        "really? https://arxiv.org/abs/2401.01234!",
        "*https://arxiv.org/abs/2401.01234*",
    ],
)
def test_trailing_punctuation_of_bare_urls(text: str) -> None:
    assert [r.key for r in find_paper_refs(text)] == ["arxiv:2401.01234"]


def test_parenthesis_inside_doi_is_kept() -> None:
    (ref,) = find_paper_refs("https://doi.org/10.1016/S0140-6736(20)30183-5")
    assert ref.key == "doi:10.1016/s0140-6736(20)30183-5"


def test_arxiv_id_in_plain_text() -> None:
    refs = find_paper_refs("have you seen arxiv:2401.01234v2 and arXiv: 2310.06825?")
    assert [r.key for r in refs] == ["arxiv:2401.01234", "arxiv:2310.06825"]


def test_doi_in_plain_text() -> None:
    (ref,) = find_paper_refs("published as doi:10.1145/3313831.3376727.")
    assert ref.key == "doi:10.1145/3313831.3376727"


def test_same_paper_in_different_forms_is_one() -> None:
    text = (
        "<https://arxiv.org/abs/2305.18290|DPO> and the pdf https://arxiv.org/pdf/2305.18290v3.pdf "
        "and <https://huggingface.co/papers/2305.18290> arxiv:2305.18290"
    )
    refs = find_paper_refs(text)
    assert [r.key for r in refs] == ["arxiv:2305.18290"]
    assert refs[0].label == "DPO"


def test_mentions_and_channels_are_not_links() -> None:
    assert find_paper_refs("<@U123ABC> <#C123|general> <!here> thanks!") == ()


def test_several_papers_in_order() -> None:
    text = "<https://aclanthology.org/N19-1423/|BERT> vs <https://arxiv.org/abs/1907.11692|RoBERTa>"
    assert [r.key for r in find_paper_refs(text)] == ["acl:N19-1423", "arxiv:1907.11692"]


def test_odd_urls_do_not_raise() -> None:
    for text in ["https://[::1", "http://", "<https://|x>", "https://arxiv.org/abs/", "doi:10.", "arxiv:"]:
        find_paper_refs(text)


def test_a_preprint_link_keeps_the_version_it_names_but_not_in_its_identity() -> None:
    v2 = parse_paper_url("https://www.biorxiv.org/content/10.1101/2020.03.01.972935v2.full.pdf")
    v1 = parse_paper_url("https://www.biorxiv.org/content/10.1101/2020.03.01.972935v1")
    bare = parse_paper_url("https://doi.org/10.1101/2020.03.01.972935")
    assert v2 is not None and v1 is not None and bare is not None
    assert (v2.version, v1.version, bare.version) == (2, 1, None)
    assert v2.key == v1.key == bare.key  # one paper across its versions


def test_pubmed_ids_in_plain_text() -> None:
    refs = find_paper_refs("see PMID: 32015507 and the full text PMC7095418.")
    assert [r.key for r in refs] == ["pmid:32015507", "pmcid:PMC7095418"]


@pytest.mark.parametrize(
    "text",
    [
        "arXiv:٢٠٢٠.١٢٣٤٥",  # Arabic-Indic digits
        "PMID: १२३४५६७",  # Devanagari digits
        "doi:10.١٢٣٤/abc",
        "https://arxiv.org/abs/２０２０.１２３４５",  # full-width digits
        "https://pubmed.ncbi.nlm.nih.gov/١٢٣٤٥٦٧/",
    ],
)
def test_digits_of_other_scripts_make_no_identifier(text: str) -> None:
    """An identifier's digits are ASCII: digits of another script (which no source answers for) make no paper."""
    assert not find_paper_refs(text)
