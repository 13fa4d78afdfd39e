/* Compiled helpers of ssrisk's loading, each with a pure-Python twin that gives the same
 * answers (used where this module was not built):
 *
 * - load: the common case of ssrisk.yamlpos.load_documents, read from libyaml's events;
 * - plain_json: ssrisk.validation.is_plain_json's walk over loaded data;
 * - parses: whether a text is YAML at all (loading's syntax-only check; PyYAML's parser
 *   gives the message of an error).
 *
 * load(text, plain) returns the list of the documents of ``text`` as ssrisk.yamlpos builds
 * them (PosMap and PosList with their packed positions, scalars resolved as
 * sigs.k8s.io/yaml does), or None when the text holds anything this reader leaves to the
 * Python one: a syntax error, an anchor or alias, an explicit tag, a key that is not a plain
 * or quoted scalar, a key that may be a merge key, a key written twice or nesting deeper
 * than the limit. The
 * caller then reads the whole text again in Python, so every rare case has one home.
 *
 * ``plain(raw)`` resolves a plain scalar that may be a number, a merge key, a null written
 * ``~`` or anything else whose first character one of YAML 1.1's implicit resolvers keys on
 * (``-+.0123456789<=~``); it returns ``bail`` for one this reader must leave to Python.
 * Plain scalars starting with any other character are resolved here: the booleans and nulls
 * of go-yaml v2 (finite word lists), otherwise text.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 200

typedef struct {
    PyObject *posmap;  /* ssrisk.yamlpos.PosMap */
    PyObject *poslist; /* ssrisk.yamlpos.PosList */
    PyObject *zero;    /* array.array('q', [0]) */
    PyObject *bail;    /* what ``plain`` returns to give the text to Python */
    PyObject *pos_name;
} state_t;

static state_t S = {NULL, NULL, NULL, NULL, NULL};

typedef struct {
    PyObject *obj;       /* the PosMap or PosList being built (owned) */
    int mapping;
    long long *pos;      /* its own position, then one per key or item */
    Py_ssize_t n, cap;
    PyObject *key;       /* the key waiting for its value (owned), or NULL */
    long long key_at;
} frame_t;

typedef struct {
    frame_t frames[MAX_DEPTH + 2];
    int depth;
    PyObject *plain;
    PyObject *cache; /* plain scalar text -> its value, for this text */
} reader_t;

static long long at_of(yaml_mark_t mark) {
    return ((long long)mark.line << 32) | (long long)mark.column;
}

static int push_pos(frame_t *f, long long at) {
    if (f->n == f->cap) {
        Py_ssize_t cap = f->cap ? f->cap * 2 : 8;
        long long *grown = PyMem_Realloc(f->pos, (size_t)cap * sizeof(long long));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        f->pos = grown;
        f->cap = cap;
    }
    f->pos[f->n++] = at;
    return 0;
}

/* Empty a frame for its next container (its position buffer is kept for reuse). */
static void clear_frame(frame_t *f) {
    Py_CLEAR(f->obj);
    Py_CLEAR(f->key);
    f->n = 0;
}

static int word(const char *s, size_t n, const char *const *words) {
    for (; *words != NULL; words++) {
        if (strlen(*words) == n && memcmp(*words, s, n) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The booleans and nulls of go-yaml v2 (resolve.go, resolveMapList: YAML 1.1's words and
 * y/n), as ssrisk.yamlpos._resolve gives them; a boolean is true when its lower case is
 * true, yes, on or y (ssrisk.yamlpos._Builder.scalar). */
static const char *const TRUE_WORDS[] = {"y",  "Y",  "yes", "Yes", "YES", "true",
                                         "True", "TRUE", "on", "On", "ON", NULL};
static const char *const FALSE_WORDS[] = {"n",     "N",     "no",  "No",  "NO", "false",
                                          "False", "FALSE", "off", "Off", "OFF", NULL};
static const char *const NULL_WORDS[] = {"null", "Null", "NULL", NULL};

/* A new reference to a scalar's value, NULL with an exception set, or a new reference to
 * S.bail. */
static PyObject *scalar_value(reader_t *r, yaml_event_t *event) {
    const char *s = (const char *)event->data.scalar.value;
    size_t n = event->data.scalar.length;
    if (event->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
        return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "strict");
    }
    if (n == 0) {
        Py_RETURN_NONE;
    }
    if (strchr("-+.0123456789<=~", s[0]) != NULL) {
        PyObject *raw = PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "strict");
        if (raw == NULL) {
            return NULL;
        }
        PyObject *value = PyDict_GetItemWithError(r->cache, raw);
        if (value != NULL) {
            Py_DECREF(raw);
            Py_INCREF(value);
            return value;
        }
        if (PyErr_Occurred()) {
            Py_DECREF(raw);
            return NULL;
        }
        value = PyObject_CallOneArg(r->plain, raw);
        if (value != NULL && PyDict_SetItem(r->cache, raw, value) < 0) {
            Py_CLEAR(value);
        }
        Py_DECREF(raw);
        return value;
    }
    if (strchr("yYnNtTfFoO", s[0]) != NULL) {
        if (word(s, n, TRUE_WORDS)) {
            Py_RETURN_TRUE;
        }
        if (word(s, n, FALSE_WORDS)) {
            Py_RETURN_FALSE;
        }
        if (word(s, n, NULL_WORDS)) {
            Py_RETURN_NONE;
        }
    }
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "strict");
}

/* Give ``value`` (a new reference, consumed) to the innermost open container, or make it
 * the root. Returns 0, -1 on error, 1 to bail. */
static int place(reader_t *r, PyObject *value, long long at, PyObject **root) {
    if (r->depth == 0) {
        Py_XSETREF(*root, value);
        return 0;
    }
    frame_t *f = &r->frames[r->depth - 1];
    if (!f->mapping) {
        int failed = PyList_Append(f->obj, value);
        Py_DECREF(value);
        return failed ? -1 : push_pos(f, at);
    }
    PyObject *key = f->key;
    f->key = NULL;
    int found = PyDict_Contains(f->obj, key);
    if (found != 0) { /* a key written twice: duplicates are reported by the Python reader */
        Py_DECREF(key);
        Py_DECREF(value);
        return found < 0 ? -1 : 1;
    }
    int failed = PyDict_SetItem(f->obj, key, value);
    Py_DECREF(key);
    Py_DECREF(value);
    return failed ? -1 : push_pos(f, f->key_at);
}

/* A scalar event in a mapping that waits for a key. Returns 0, -1 on error, 1 to bail. */
static int take_key(frame_t *f, yaml_event_t *event) {
    const char *s = (const char *)event->data.scalar.value;
    size_t n = event->data.scalar.length;
    if (event->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && n > 0 && s[0] == '<') {
        return 1; /* maybe a merge key */
    }
    PyObject *key = PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "strict");
    if (key == NULL) {
        return -1;
    }
    PyUnicode_InternInPlace(&key);
    f->key = key;
    f->key_at = at_of(event->start_mark);
    return 0;
}

/* The positions as an array('q') of exactly their size (array('q', bytes) over-allocates,
 * as appending does; repeating a one-item array allocates exactly). */
static PyObject *packed(frame_t *f) {
    PyObject *arr = PySequence_Repeat(S.zero, f->n);
    if (arr == NULL) {
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(arr, &view, PyBUF_WRITABLE) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    if (view.len != f->n * (Py_ssize_t)sizeof(long long)) {
        PyBuffer_Release(&view);
        Py_DECREF(arr);
        PyErr_SetString(PyExc_RuntimeError, "ssrisk._cyaml: array('q') is not 8 bytes a item");
        return NULL;
    }
    memcpy(view.buf, f->pos, (size_t)view.len);
    PyBuffer_Release(&view);
    return arr;
}

/* Close the innermost container and place it. Returns 0, -1 on error, 1 to bail. */
static int close_container(reader_t *r, PyObject **root) {
    frame_t *f = &r->frames[r->depth - 1];
    if (f->key != NULL) {
        return -1; /* a key without a value: libyaml never emits this */
    }
    PyObject *pos = packed(f);
    if (pos == NULL || PyObject_SetAttr(f->obj, S.pos_name, pos) < 0) {
        Py_XDECREF(pos);
        return -1;
    }
    Py_DECREF(pos);
    PyObject *obj = f->obj;
    long long at = f->pos[0];
    f->obj = NULL;
    clear_frame(f);
    r->depth--;
    return place(r, obj, at, root);
}

/* One event. Returns 0, -1 on error, 1 to bail, 2 at the end of the stream. */
static int step(reader_t *r, yaml_event_t *event, PyObject **root, PyObject *docs) {
    frame_t *f = r->depth ? &r->frames[r->depth - 1] : NULL;
    switch (event->type) {
    case YAML_STREAM_START_EVENT:
        return 0;
    case YAML_STREAM_END_EVENT:
        return 2;
    case YAML_DOCUMENT_START_EVENT:
        Py_CLEAR(*root);
        return 0;
    case YAML_DOCUMENT_END_EVENT: {
        int failed = PyList_Append(docs, *root ? *root : Py_None);
        Py_CLEAR(*root);
        return failed ? -1 : 0;
    }
    case YAML_ALIAS_EVENT:
        return 1;
    case YAML_SCALAR_EVENT: {
        if (event->data.scalar.anchor != NULL || event->data.scalar.tag != NULL) {
            return 1;
        }
        if (f != NULL && f->mapping && f->key == NULL) {
            return take_key(f, event);
        }
        PyObject *value = scalar_value(r, event);
        if (value == NULL) {
            return -1;
        }
        if (value == S.bail) {
            Py_DECREF(value);
            return 1;
        }
        return place(r, value, at_of(event->start_mark), root);
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        int mapping = event->type == YAML_MAPPING_START_EVENT;
        yaml_char_t *anchor =
            mapping ? event->data.mapping_start.anchor : event->data.sequence_start.anchor;
        yaml_char_t *tag = mapping ? event->data.mapping_start.tag : event->data.sequence_start.tag;
        if (anchor != NULL || tag != NULL || r->depth > MAX_DEPTH) {
            return 1;
        }
        if (f != NULL && f->mapping && f->key == NULL) {
            return 1; /* a mapping or sequence as a key */
        }
        frame_t *g = &r->frames[r->depth];
        g->obj = PyObject_CallNoArgs(mapping ? S.posmap : S.poslist);
        if (g->obj == NULL) {
            return -1;
        }
        g->mapping = mapping;
        g->key = NULL;
        r->depth++;
        return push_pos(g, at_of(event->start_mark));
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return close_container(r, root);
    default:
        return 1;
    }
}

static PyObject *load(PyObject *self, PyObject *args) {
    PyObject *text, *plain;
    if (!PyArg_ParseTuple(args, "UO:load", &text, &plain)) {
        return NULL;
    }
    if (S.posmap == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "ssrisk._cyaml.configure was not called");
        return NULL;
    }
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (utf8 == NULL) { /* lone surrogates: the Python reader says what is wrong */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    reader_t *r = PyMem_Calloc(1, sizeof(reader_t));
    if (r == NULL) {
        return PyErr_NoMemory();
    }
    r->plain = plain;
    r->cache = PyDict_New();
    PyObject *docs = PyList_New(0);
    PyObject *root = NULL;
    yaml_parser_t parser;
    int outcome = -1;
    if (r->cache != NULL && docs != NULL && yaml_parser_initialize(&parser)) {
        yaml_parser_set_input_string(&parser, (const unsigned char *)utf8, (size_t)size);
        /* no encoding set: libyaml finds UTF-8 and skips a leading byte order mark without
         * counting it, as for PyYAML's parser (which gives it the text the same way) */
        outcome = 0;
        while (outcome == 0) {
            yaml_event_t event;
            if (!yaml_parser_parse(&parser, &event)) {
                outcome = 1; /* a syntax error: the Python reader reports it */
                break;
            }
            outcome = step(r, &event, &root, docs);
            yaml_event_delete(&event);
        }
        yaml_parser_delete(&parser);
    } else if (r->cache != NULL && docs != NULL) {
        PyErr_NoMemory();
    }
    for (int i = 0; i < MAX_DEPTH + 2; i++) {
        clear_frame(&r->frames[i]);
        PyMem_Free(r->frames[i].pos);
    }
    Py_XDECREF(root);
    Py_XDECREF(r->cache);
    PyMem_Free(r);
    if (outcome == 2) {
        return docs;
    }
    Py_XDECREF(docs);
    if (outcome == 1) {
        Py_RETURN_NONE;
    }
    if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_RuntimeError, "ssrisk._cyaml: unexpected event order");
    }
    return NULL;
}


/* plain_json(data, max_nodes, max_depth, before) -> set of the ids of data's containers, or
 * None: ssrisk.validation.is_plain_json's walk (only mappings with str keys, lists, str, int,
 * bool and None; no container reached twice or named in ``before``, a set of ids or None;
 * at most ``max_nodes`` values; containers less than ``max_depth`` deep). */
typedef struct {
    PyObject *value; /* borrowed: the data is not changed during the walk */
    Py_ssize_t depth;
} item_t;

static int push_item(item_t **stack, Py_ssize_t *n, Py_ssize_t *cap, PyObject *v, Py_ssize_t d) {
    if (*n == *cap) {
        Py_ssize_t grown_cap = *cap ? *cap * 2 : 64;
        item_t *grown = PyMem_Realloc(*stack, (size_t)grown_cap * sizeof(item_t));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        *stack = grown;
        *cap = grown_cap;
    }
    (*stack)[*n].value = v;
    (*stack)[*n].depth = d;
    (*n)++;
    return 0;
}

static PyObject *plain_json(PyObject *self, PyObject *args) {
    PyObject *data, *before;
    Py_ssize_t budget, max_depth;
    if (!PyArg_ParseTuple(args, "OnnO:plain_json", &data, &budget, &max_depth, &before)) {
        return NULL;
    }
    if (before != Py_None && !PyAnySet_Check(before)) {
        PyErr_SetString(PyExc_TypeError, "before must be a set or None");
        return NULL;
    }
    PyObject *seen = PySet_New(NULL);
    item_t *stack = NULL;
    Py_ssize_t n = 0, cap = 0;
    int plain = seen != NULL && push_item(&stack, &n, &cap, data, 0) == 0 ? 1 : -1;
    while (plain == 1 && n > 0) {
        item_t it = stack[--n];
        PyObject *v = it.value;
        budget--;
        if (PyUnicode_CheckExact(v) || PyLong_CheckExact(v) || PyBool_Check(v) || v == Py_None) {
            continue;
        }
        int mapping = PyDict_Check(v), list = PyList_Check(v);
        if (budget < 0 || it.depth >= max_depth || !(mapping || list)) {
            plain = 0;
            break;
        }
        PyObject *id = PyLong_FromVoidPtr(v);
        if (id == NULL) {
            plain = -1;
            break;
        }
        int again = PySet_Contains(seen, id);
        if (again == 0 && before != Py_None) {
            again = PySet_Contains(before, id);
        }
        if (again != 0 || (mapping ? PyDict_GET_SIZE(v) : PyList_GET_SIZE(v)) > budget) {
            Py_DECREF(id);
            plain = again < 0 ? -1 : 0;
            break;
        }
        int added = PySet_Add(seen, id);
        Py_DECREF(id);
        if (added < 0) {
            plain = -1;
            break;
        }
        if (mapping) {
            Py_ssize_t pos = 0;
            PyObject *key, *item;
            while (plain == 1 && PyDict_Next(v, &pos, &key, &item)) {
                if (!PyUnicode_CheckExact(key)) {
                    plain = 0;
                } else if (push_item(&stack, &n, &cap, item, it.depth + 1) < 0) {
                    plain = -1;
                }
            }
        } else {
            for (Py_ssize_t i = 0; plain == 1 && i < PyList_GET_SIZE(v); i++) {
                if (push_item(&stack, &n, &cap, PyList_GET_ITEM(v, i), it.depth + 1) < 0) {
                    plain = -1;
                }
            }
        }
    }
    PyMem_Free(stack);
    if (plain == 1 && budget >= 0) {
        return seen;
    }
    Py_XDECREF(seen);
    if (plain < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* parses(text) -> True when libyaml parses the whole stream with nesting no deeper than
 * MAX_DEPTH, False otherwise, None for a text that is not valid Unicode (lone surrogates):
 * loading's syntax-only check of the documents it does not read, without a Python object per
 * event. The text is given to libyaml as load() gives it. On False the caller asks PyYAML,
 * which gives the error's message and marks; deep nesting goes there too, for the libyaml
 * PyYAML bundles may limit nesting (newer releases refuse more than 1000 levels) where the
 * system's does not. */
static PyObject *parses(PyObject *self, PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "parses() takes a str");
        return NULL;
    }
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (utf8 == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        return PyErr_NoMemory();
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)utf8, (size_t)size);
    int ok = 1, done = 0, depth = 0;
    while (!done && ok) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) {
            ok = 0;
            break;
        }
        switch (event.type) {
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            ok = ++depth <= MAX_DEPTH;
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            break;
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        default:
            break;
        }
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    return PyBool_FromLong(ok);
}

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *posmap, *poslist, *array, *bail;
    if (!PyArg_ParseTuple(args, "OOOO:configure", &posmap, &poslist, &array, &bail)) {
        return NULL;
    }
    PyObject *zero = PyObject_CallFunction(array, "s[i]", "q", 0);
    if (zero == NULL) {
        return NULL;
    }
    Py_INCREF(posmap);
    Py_INCREF(poslist);
    Py_INCREF(bail);
    Py_XSETREF(S.posmap, posmap);
    Py_XSETREF(S.poslist, poslist);
    Py_XSETREF(S.zero, zero);
    Py_XSETREF(S.bail, bail);
    if (S.pos_name == NULL) {
        S.pos_name = PyUnicode_InternFromString("_pos");
        if (S.pos_name == NULL) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(posmap, poslist, array, bail): the types to build and the bail marker."},
    {"plain_json", plain_json, METH_VARARGS,
     "plain_json(data, max_nodes, max_depth, before) -> set of container ids, or None."},
    {"load", load, METH_VARARGS,
     "load(text, plain) -> list of documents, or None to leave the text to Python."},
    {"parses", parses, METH_O,
     "parses(text) -> whether libyaml parses the whole stream (None: not valid Unicode)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "ssrisk._cyaml",
    "Compiled helpers of ssrisk's loading: yamlpos.load_documents' common case and "
    "validation.is_plain_json's walk.",
    -1,
    methods,
};

PyMODINIT_FUNC PyInit__cyaml(void) { return PyModule_Create(&module); }
