"""The channel's reading list taken elsewhere: as BibTeX, RIS or CSL-JSON (``citations``, pure), and into a
Zotero group library (``zotero``, through pyzotero). What is on the list is ``storage.reading_list``'s."""
