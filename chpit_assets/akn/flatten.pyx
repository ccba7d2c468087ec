# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The articles of a parsed AKN tree, read straight from libxml2's nodes (issue 27.3).

`articles(root, article_type, article_number)` returns, for every `a:article` under
`/a:akomaNtoso/a:act/a:body` in document order, the record `article_type(e_id, occurrence,
article_number, heading, text)`: the eId; its occurrence among the articles with that eId (1, 2, ...);
the article number read off the stripped inline text of its `num` child; the inline text of its
`heading` (stripped; one that strips empty is None); its text laid out as `chpit_assets.akn.parser`
documents (one line per paragraph, number first; a line per list item and table row, cells separated
by a tab). An article without an eId, or with blocks but no text (it lost its wording; a repealed
article has no blocks at all), raises MissingEId or LostText once the walk is done.

The article number: "Art. 5", "Art. 268a bis", the printed form of nearly every article in every
language, is read here from the bytes; any other form goes to `article_number(num, e_id)`, the
parser's Python rule, so the result is always what that rule gives (for 1,274 articles of SR 210 the
rule's regex, the strings it cuts and the records made in Python were 1.1 ms, a tenth of a bare parse).

The layout is specified by the XSLT stylesheet and line joiner this module replaced, kept as the
oracle in `tests/akn/reference.py`; a differential test holds this module to them on every real
file and on generated trees (white space of every kind Python's str.strip() knows at every edge).

How, in two steps per article:
1. The walk writes the article's fields into a UTF-8 buffer. Blocks are marked with private-use
   separators as the stylesheet wrote them: U+E002 starts a line, U+E003 a paragraph's or item's
   number, U+E004 ends a numbered block, U+E005 separates table cells. While writing, `\\n`, `\\t` and
   `\\r` become spaces and a run of spaces becomes one (the XML's indentation): both ASCII, so neither
   can meet a separator or split a UTF-8 character. Text that carries a separator itself (written as
   a character reference) raises ReservedCharacter instead of splitting a line.
2. The body is cut at the separators into lines, stripped of white space exactly as str.strip()
   strips it (Py_UNICODE_ISSPACE on each code point at an edge), numbers joined to their first line.

Why C: the same walk through libxslt cost 0.47 of a bare parse, the line joining in Python 0.2 more,
and a walk from Python about 2x (every element visited makes a proxy object). This visits each node
for a few dozen instructions (docs/perf/parse.md).
"""

from cpython.unicode cimport Py_UNICODE_ISSPACE, PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8
from libc.stdlib cimport free, realloc
from libc.string cimport memchr, memcmp, memcpy, memset, strcmp, strcspn, strlen, strstr

cimport lxml.includes.etreepublic as cetree
from lxml.includes.tree cimport (
    XML_CDATA_SECTION_NODE,
    XML_ELEMENT_NODE,
    XML_TEXT_NODE,
    xmlAttr,
    xmlNode,
)

cetree.import_lxml__etree()

cdef const char* AKN_NS = b"http://docs.oasis-open.org/legaldocml/ns/akn/3.0"

# The separators: U+E000 + n, in UTF-8 EE 80 80+n.
cdef enum:
    LINE_SEP = 2
    NUM_SEP = 3
    END_SEP = 4
    CELL_SEP = 5

# What an element of the AKN namespace is to the walk.
cdef enum Kind:
    OTHER = 0
    NOTE  # authorialNote, placeholder: not wording, skipped in both modes
    BR  # a space inline
    NUM
    HEADING
    ARTICLE
    NUMBERED  # paragraph, item: a line that starts with their number
    CONTAINER  # its child elements are blocks
    TABLE
    ROW  # tr
    CELL  # td, th
    ROOT  # akomaNtoso
    ACT
    BODY

cdef dict KINDS = {
    b"authorialNote": NOTE, b"placeholder": NOTE, b"br": BR, b"num": NUM, b"heading": HEADING,
    b"article": ARTICLE, b"paragraph": NUMBERED, b"item": NUMBERED, b"table": TABLE,
    b"tr": ROW, b"td": CELL, b"th": CELL, b"akomaNtoso": ROOT, b"act": ACT, b"body": BODY,
}
for _name in (b"content", b"intro", b"wrapUp", b"subdivision", b"hcontainer", b"level", b"section", b"list",
              b"container", b"div", b"subparagraph", b"point", b"alinea", b"blockContainer", b"blockList",
              b"transitional"):
    KINDS[_name] = CONTAINER

# The kind cache: open addressing on the name's pointer. libxml2 interns element names in the
# document's dictionary, so each distinct name (about 40 in an AKN file) is looked up by string once;
# a Python dict keyed by the pointer cost half as much as the rest of the walk.
cdef enum:
    CACHE_SIZE = 512  # a power of two, well above the distinct names of a document


class ReservedCharacter(ValueError):
    """Text carries one of the separators U+E000..U+E005 (as a character reference, since the parser
    refuses them in the raw bytes): written as it is, it would split a line or a field."""


class MissingEId(ValueError):
    """An article without an eId (or an empty one): it cannot be keyed."""


class LostText(ValueError):
    """An article with blocks whose text came out empty: its wording was lost."""

    def __init__(self, e_id, occurrence):
        super().__init__(e_id, occurrence)
        self.e_id = e_id
        self.occurrence = occurrence


# The bytes write() looks at: the end of the string, white space the XML indents with, and the lead
# byte of a separator. Every other byte is copied as it is.
cdef unsigned char SPECIAL[256]
memset(SPECIAL, 0, sizeof(SPECIAL))
for _byte in (0, 9, 10, 13, 32, 0xEE):
    SPECIAL[_byte] = 1


cdef struct Buffer:
    unsigned char* data
    Py_ssize_t size
    Py_ssize_t capacity


cdef struct CacheEntry:
    const void* name
    Kind kind


cdef int reserve(Buffer* b, Py_ssize_t extra) except -1:
    cdef Py_ssize_t capacity = b.capacity or 65536
    cdef unsigned char* data
    if b.size + extra <= b.capacity:
        return 0
    while capacity < b.size + extra:
        capacity *= 2
    data = <unsigned char*>realloc(b.data, capacity)
    if data == NULL:
        raise MemoryError()
    b.data = data
    b.capacity = capacity
    return 0


cdef int append(Buffer* b, const unsigned char* s, Py_ssize_t n) except -1:
    reserve(b, n)
    memcpy(b.data + b.size, s, n)
    b.size += n
    return 0


cdef extern from "Python.h":
    ctypedef unsigned char Py_UCS1
    ctypedef unsigned short Py_UCS2
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void* PyUnicode_DATA(object s)


ctypedef fused CodeUnit:
    Py_UCS1
    Py_UCS2


cdef void fill(CodeUnit* out, const unsigned char* d, Py_ssize_t i, Py_ssize_t end) noexcept:
    """Decode the UTF-8 in d[i:end], none of it over U+FFFF, into `out`: compiled once per width, a
    loop without a width test per character (CPython's PyUnicode_WRITE made SR 210 measurably slower)."""
    cdef unsigned char c
    while i < end:
        c = d[i]
        if c < 0x80:
            out[0] = c
            i += 1
        elif c < 0xE0:
            out[0] = <CodeUnit>(((c & 0x1F) << 6) | (d[i + 1] & 0x3F))
            i += 2
        else:
            out[0] = <CodeUnit>(((c & 0x0F) << 12) | ((d[i + 1] & 0x3F) << 6) | (d[i + 2] & 0x3F))
            i += 3
        out += 1


cdef str decode(Buffer* b, Py_ssize_t start, Py_ssize_t end):
    """b.data[start:end] as str. The bytes are valid UTF-8 (libxml2's text, cut only at ASCII
    separators and whole code points), so no check is needed: the code points are counted and the
    widest lead byte found in one pass, and the str of the right width is filled in a second.
    CPython's decoder, which cannot know the width ahead, built most French articles twice (Latin-1,
    then again as UCS-2 at the first "’"): 0.9 ms of SR 210's 1,274 articles, against 0.4 ms so."""
    cdef const unsigned char* d = b.data
    cdef Py_ssize_t i, n = 0
    cdef unsigned char c, widest = 0
    for i in range(start, end):
        c = d[i]
        n += (c & 0xC0) != 0x80
        widest = c if c > widest else widest
    if widest < 0x80 or widest >= 0xF0:  # ASCII: a copy; beyond U+FFFF: rare, CPython's decoder
        return PyUnicode_DecodeUTF8(<char*>d + start, end - start, NULL)
    if widest < 0xC4:  # leads C2, C3 only: every code point under U+0100
        result = PyUnicode_New(n, 0xFF)
        fill(<Py_UCS1*>PyUnicode_DATA(result), d, start, end)
    else:
        result = PyUnicode_New(n, 0xFFFF)
        fill(<Py_UCS2*>PyUnicode_DATA(result), d, start, end)
    return result


cdef inline bint is_separator(const unsigned char* d, Py_ssize_t i, Py_ssize_t end, int which) noexcept:
    return i + 3 <= end and d[i] == 0xEE and d[i + 1] == 0x80 and d[i + 2] == 0x80 + which


cdef Py_ssize_t find_separator(const unsigned char* d, Py_ssize_t i, Py_ssize_t end, int which) noexcept:
    """The offset of the next separator `which` at or after i, or `end`."""
    cdef const unsigned char* lead
    while i < end:
        lead = <const unsigned char*>memchr(d + i, 0xEE, end - i)
        if lead == NULL:
            return end
        i = lead - d
        if is_separator(d, i, end, which):
            return i
        i += 1
    return end


cdef inline Py_UCS4 code_point(const unsigned char* d, Py_ssize_t i, int* length) noexcept:
    """The code point whose (valid: libxml2 checked it) UTF-8 sequence starts at i."""
    cdef unsigned char c = d[i]
    if c < 0x80:
        length[0] = 1
        return c
    if c < 0xE0:
        length[0] = 2
        return ((c & 0x1F) << 6) | (d[i + 1] & 0x3F)
    if c < 0xF0:
        length[0] = 3
        return ((c & 0x0F) << 12) | ((d[i + 1] & 0x3F) << 6) | (d[i + 2] & 0x3F)
    length[0] = 4
    return ((c & 0x07) << 18) | ((d[i + 1] & 0x3F) << 12) | ((d[i + 2] & 0x3F) << 6) | (d[i + 3] & 0x3F)


cdef Py_ssize_t strip_start(const unsigned char* d, Py_ssize_t start, Py_ssize_t end) noexcept:
    """The first offset in [start, end) whose code point is not white space to str.strip(), or end."""
    cdef int length
    while start < end and Py_UNICODE_ISSPACE(code_point(d, start, &length)):
        start += length
    return start


cdef Py_ssize_t strip_end(const unsigned char* d, Py_ssize_t start, Py_ssize_t end) noexcept:
    """The end of [start, end) without the white space str.strip() takes off its right."""
    cdef int length
    cdef Py_ssize_t lead
    while end > start:
        lead = end - 1
        while lead > start and (d[lead] & 0xC0) == 0x80:  # back over continuation bytes
            lead -= 1
        if not Py_UNICODE_ISSPACE(code_point(d, lead, &length)):
            break
        end = lead
    return end


cdef class Walk:
    """One walk over one tree: its buffers and the element kinds seen so far."""

    cdef Buffer fields  # the article being read: eId, num, heading and body, each after the other
    cdef Buffer text  # its text, the lines joined
    cdef Buffer row  # a table row's cells, stripped and joined by tabs, before the row is stripped
    cdef Buffer pending  # numbers not yet placed: "5", or "5 a." for an item that opens its paragraph
    cdef Py_ssize_t lines  # lines in `text`
    cdef const void* akn_ns  # the xmlNs of the AKN namespace once seen: later checks compare pointers
    cdef CacheEntry cache[CACHE_SIZE]
    cdef int cached  # entries in use: past half full, lookups stop caching (a tree of made-up names)
    cdef bint nested  # an article element was met below the article being read
    cdef dict seen  # e_id -> articles with it so far
    cdef object article_type
    cdef object article_number  # the parser's rule, for a number not of the form "Art. 5a bis"
    cdef object problem  # the first MissingEId or LostText, raised once the walk is done

    def __cinit__(self):
        memset(&self.fields, 0, sizeof(Buffer))
        memset(&self.text, 0, sizeof(Buffer))
        memset(&self.row, 0, sizeof(Buffer))
        memset(&self.pending, 0, sizeof(Buffer))
        memset(self.cache, 0, sizeof(self.cache))
        self.akn_ns = NULL
        self.cached = 0
        self.seen = {}
        self.problem = None

    def __dealloc__(self):
        free(self.fields.data)
        free(self.text.data)
        free(self.row.data)
        free(self.pending.data)

    # -- step 1: the walk ------------------------------------------------------------------------

    cdef Kind kind(self, xmlNode* node) except? OTHER:
        """The node's kind if it is an element of the AKN namespace, else OTHER."""
        cdef size_t slot
        cdef Kind found
        if node.ns == NULL:
            return OTHER
        if <const void*>node.ns != self.akn_ns:
            if node.ns.href == NULL or strcmp(<const char*>node.ns.href, AKN_NS) != 0:
                return OTHER
            self.akn_ns = <const void*>node.ns
        slot = (<size_t>node.name >> 4) & (CACHE_SIZE - 1)
        while self.cache[slot].name != NULL and self.cache[slot].name != <const void*>node.name:
            slot = (slot + 1) & (CACHE_SIZE - 1)
        if self.cache[slot].name != NULL:
            found = self.cache[slot].kind
        else:
            found = <Kind><int>KINDS.get(<bytes><const char*>node.name, OTHER)
            if self.cached < CACHE_SIZE // 2:
                self.cache[slot].name = <const void*>node.name
                self.cache[slot].kind = found
                self.cached += 1
        if found == ARTICLE:
            self.nested = True
        return found

    cdef int scan(self, xmlNode* node) except -1:
        """Look for an article below an element the layout skips (a footnote, a br, a number read
        elsewhere), so that every element below an article has been looked at (see find_articles)."""
        cdef xmlNode* child = node.children
        while child != NULL and not self.nested:
            if child.type == XML_ELEMENT_NODE:
                self.kind(child)
                self.scan(child)
            child = child.next
        return 0

    cdef int separator(self, int which) except -1:
        cdef unsigned char bytes_[3]
        bytes_[0] = 0xEE
        bytes_[1] = 0x80
        bytes_[2] = 0x80 + which
        append(&self.fields, bytes_, 3)
        return 0

    cdef int write(self, const unsigned char* s) except -1:
        """Append text: \\n \\t \\r as spaces, no space after a space, no separator let through."""
        cdef unsigned char c
        cdef unsigned char* data
        cdef Py_ssize_t n, i = 0
        if s == NULL:
            return 0
        n = <Py_ssize_t>strlen(<const char*>s)
        reserve(&self.fields, n)
        data = self.fields.data
        # Most text needs nothing done: no \n \t \r, no separator lead byte, no two spaces, and no space
        # at its start after a space already written. Those checks are library scans (vectorised), much
        # cheaper than looking at each byte here.
        if (
            <Py_ssize_t>strcspn(<const char*>s, b"\t\n\r\xee") == n
            and strstr(<const char*>s, b"  ") == NULL
            and not (s[0] == 32 and self.fields.size > 0 and data[self.fields.size - 1] == 32)
        ):
            memcpy(data + self.fields.size, s, n)
            self.fields.size += n
            return 0
        n = self.fields.size
        while True:
            c = s[i]
            i += 1
            if not SPECIAL[c]:
                data[n] = c
                n += 1
            elif c == 0:
                break
            elif c == 0xEE:
                if s[i] == 0x80 and 0x80 <= s[i + 1] <= 0x85:
                    self.fields.size = n
                    raise ReservedCharacter()
                data[n] = c
                n += 1
            elif n == 0 or data[n - 1] != 32:  # white space: one space for a run
                data[n] = 32
                n += 1
        self.fields.size = n
        return 0

    cdef int inline(self, xmlNode* node) except -1:
        """The inline text of `node`'s children: text and CDATA as they are, notes skipped, br a space."""
        cdef xmlNode* child = node.children
        cdef Kind k
        while child != NULL:
            if child.type == XML_TEXT_NODE or child.type == XML_CDATA_SECTION_NODE:
                self.write(child.content)
            elif child.type == XML_ELEMENT_NODE:
                k = self.kind(child)
                if k == BR:
                    self.write(b" ")
                    self.scan(child)
                elif k == NOTE:
                    self.scan(child)
                else:
                    self.inline(child)
            child = child.next
        return 0

    cdef int inline_children(self, xmlNode* node, Kind wanted) except -1:
        """The inline text of each child element of kind `wanted` (the num of an article, paragraph or
        item; an article's heading)."""
        cdef xmlNode* child = node.children
        while child != NULL:
            if child.type == XML_ELEMENT_NODE and self.kind(child) == wanted:
                self.inline(child)
            child = child.next
        return 0

    cdef int blocks(self, xmlNode* node, bint of_article) except -1:
        """Each child element of `node` as a block. Numbers are skipped (a paragraph or item reads its
        own first), and so is an article's heading, a field of its own."""
        cdef xmlNode* child = node.children
        cdef Kind k
        while child != NULL:
            if child.type == XML_ELEMENT_NODE:
                k = self.kind(child)
                if not (of_article and k == HEADING):
                    self.block(child, k)
            child = child.next
        return 0

    cdef int block(self, xmlNode* node, Kind k) except -1:
        if k == NOTE or k == NUM:
            self.scan(node)
        elif k == NUMBERED:
            self.separator(LINE_SEP)
            self.separator(NUM_SEP)
            self.inline_children(node, NUM)
            self.blocks(node, False)
            self.separator(LINE_SEP)
            self.separator(END_SEP)
        elif k == CONTAINER:
            self.blocks(node, False)
        elif k == TABLE:
            self.rows(node)
        else:  # p, listIntroduction, a subdivision's heading, anything else: one line
            self.separator(LINE_SEP)
            self.inline(node)
        return 0

    cdef int rows(self, xmlNode* node) except -1:
        """Every tr below `node` (a nested table's too), document order: a line each, cells separated."""
        cdef xmlNode* child = node.children
        cdef xmlNode* cell
        cdef bint first
        while child != NULL:
            if child.type == XML_ELEMENT_NODE:
                if self.kind(child) == ROW:
                    self.separator(LINE_SEP)
                    first = True
                    cell = child.children
                    while cell != NULL:
                        if cell.type == XML_ELEMENT_NODE and self.kind(cell) == CELL:
                            if not first:
                                self.separator(CELL_SEP)
                            first = False
                            self.inline(cell)
                        cell = cell.next
                self.rows(child)
            child = child.next
        return 0

    cdef int find_articles(self, xmlNode* node, list out) except -1:
        """Every article below `node`, document order; an article inside an article is its own record too.

        Reading an article looks at every element below it (kind() or scan()), so its subtree is searched
        for nested articles again only where one was met: a second pass over every article cost more
        CPU time in cache misses than its instructions show."""
        cdef xmlNode* child = node.children
        while child != NULL:
            if child.type == XML_ELEMENT_NODE:
                if self.kind(child) == ARTICLE:
                    self.nested = False
                    out.append(self.article(child))
                    if self.nested:
                        self.find_articles(child, out)
                else:
                    self.find_articles(child, out)
            child = child.next
        return 0

    cdef object article(self, xmlNode* node):
        cdef Py_ssize_t e_id_end, num_end, heading_end
        cdef xmlAttr* attr = node.properties
        cdef xmlNode* value
        cdef bint has_blocks
        self.fields.size = 0
        while attr != NULL:
            if attr.ns == NULL and strcmp(<const char*>attr.name, b"eId") == 0:
                value = attr.children
                while value != NULL:
                    self.write(value.content)
                    value = value.next
                break
            attr = attr.next
        e_id_end = self.fields.size
        self.separator(LINE_SEP)  # any character but a space: no space run joins two fields
        self.inline_children(node, NUM)
        num_end = self.fields.size
        self.separator(LINE_SEP)
        self.inline_children(node, HEADING)
        heading_end = self.fields.size
        self.blocks(node, True)
        has_blocks = self.fields.size > heading_end
        self.join_lines(heading_end, self.fields.size)
        e_id = decode(&self.fields, 0, e_id_end)
        occurrence = self.seen.get(e_id, 0) + 1
        self.seen[e_id] = occurrence
        number = self.number(e_id_end + 3, num_end, e_id)
        heading = self.decode_stripped(num_end + 3, heading_end)
        text = decode(&self.text, 0, self.text.size)
        if self.problem is None:
            if not e_id:
                self.problem = MissingEId()
            elif not text and has_blocks:
                self.problem = LostText(e_id, occurrence)
        return tuple.__new__(self.article_type, (e_id, occurrence, number, heading or None, text))

    cdef object number(self, Py_ssize_t start, Py_ssize_t end, str e_id):
        """The article number of the num text in fields[start:end]: "Art." and spaces, ASCII digits,
        lower-case ASCII letters, up to two words of them ("268a bis") are the number as the parser's
        rule reads it; anything else is left to that rule."""
        cdef const unsigned char* d = self.fields.data
        cdef Py_ssize_t i, j, words = 0
        start = strip_start(d, start, end)
        end = strip_end(d, start, end)
        if end - start > 4 and memcmp(d + start, b"Art.", 4) == 0:
            i = start + 4
            while i < end and d[i] == 32:
                i += 1
            j = i
            while j < end and 48 <= d[j] <= 57:
                j += 1
            if j > i:
                while j < end and 97 <= d[j] <= 122:
                    j += 1
                while words < 2 and j + 1 < end and d[j] == 32 and 97 <= d[j + 1] <= 122:
                    j += 2
                    while j < end and 97 <= d[j] <= 122:
                        j += 1
                    words += 1
                if j == end:
                    return PyUnicode_DecodeASCII(<char*>d + i, end - i, NULL)
        return self.article_number(decode(&self.fields, start, end), e_id)

    cdef str decode_stripped(self, Py_ssize_t start, Py_ssize_t end):
        start = strip_start(self.fields.data, start, end)
        return decode(&self.fields, start, strip_end(self.fields.data, start, end))

    # -- step 2: the lines -----------------------------------------------------------------------

    cdef int join_lines(self, Py_ssize_t start, Py_ssize_t end) except -1:
        """The body in fields[start:end] (it begins with a line separator, or is empty) as text."""
        cdef const unsigned char* d
        cdef Py_ssize_t piece, piece_end
        self.text.size = 0
        self.pending.size = 0
        self.lines = 0
        piece = start
        while piece < end:
            piece += 3  # the line separator
            d = self.fields.data
            piece_end = find_separator(d, piece, end, LINE_SEP)
            if is_separator(d, piece, piece_end, NUM_SEP):
                self.pending_number(piece + 3, piece_end)
            elif is_separator(d, piece, piece_end, END_SEP):
                if self.pending.size:  # a numbered element with no text of its own
                    self.line(self.pending.data, 0, self.pending.size)
                    self.pending.size = 0
            elif find_separator(d, piece, piece_end, CELL_SEP) < piece_end:
                self.table_row(piece, piece_end)
                self.line(self.row.data, 0, self.row.size)
            else:
                self.line(d, piece, piece_end)
            piece = piece_end
        return 0

    cdef int pending_number(self, Py_ssize_t start, Py_ssize_t end) except -1:
        cdef const unsigned char* d = self.fields.data
        start = strip_start(d, start, end)
        end = strip_end(d, start, end)
        if start < end:
            if self.pending.size:
                append(&self.pending, b" ", 1)
            append(&self.pending, d + start, end - start)
        return 0

    cdef int table_row(self, Py_ssize_t start, Py_ssize_t end) except -1:
        """Into `row`: the cells of fields[start:end], each stripped, joined by tabs."""
        cdef const unsigned char* d = self.fields.data
        cdef Py_ssize_t cell_end, a, b
        self.row.size = 0
        while True:
            cell_end = find_separator(d, start, end, CELL_SEP)
            a = strip_start(d, start, cell_end)
            b = strip_end(d, a, cell_end)
            append(&self.row, d + a, b - a)
            if cell_end == end:
                return 0
            append(&self.row, b"\t", 1)
            start = cell_end + 3

    cdef int line(self, const unsigned char* d, Py_ssize_t start, Py_ssize_t end) except -1:
        """Add d[start:end] stripped as a line, after the pending numbers; nothing if it strips empty."""
        start = strip_start(d, start, end)
        end = strip_end(d, start, end)
        if start == end:
            return 0
        if self.lines:
            append(&self.text, b"\n", 1)
        if self.pending.size and d != self.pending.data:
            append(&self.text, self.pending.data, self.pending.size)
            append(&self.text, b" ", 1)
            self.pending.size = 0
        append(&self.text, d + start, end - start)
        self.lines += 1
        return 0


def articles(cetree._Element root, article_type, article_number):
    """The `article_type` record of every article of the edition whose root element is `root`.
    `article_type` is a tuple subclass (the parser's NamedTuple), made with `tuple.__new__`: calling a
    NamedTuple runs its `__new__` in Python, a third of the records' cost. Raises ReservedCharacter when text carries a separator character, MissingEId or LostText for the
    first article in document order without an eId or without the text its blocks had."""
    cdef Walk walk = Walk()
    cdef list out = []
    cdef xmlNode* top = root._c_node
    cdef xmlNode* act
    cdef xmlNode* body
    walk.article_type = article_type
    walk.article_number = article_number
    if top.type != XML_ELEMENT_NODE or walk.kind(top) != ROOT:
        return out
    act = top.children
    while act != NULL:
        if act.type == XML_ELEMENT_NODE and walk.kind(act) == ACT:
            body = act.children
            while body != NULL:
                if body.type == XML_ELEMENT_NODE and walk.kind(body) == BODY:
                    walk.find_articles(body, out)
                body = body.next
        act = act.next
    if walk.problem is not None:
        raise walk.problem
    return out
