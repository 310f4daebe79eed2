"""edgellm from Python: a ctypes binding of the C API (include/edgellm/edgellm.h).

One file, standard library only. Point EDGELLM_LIBRARY at libedgellm.so (or
pass its path to load_library); otherwise the system's loader looks for it.

    import edgellm
    with edgellm.Model("stories260K.gguf", n_threads=1) as m, m.context(n_ctx=512) as ctx:
        ctx.prefill(m.tokenize("Once upon a time"))
        for token, piece in ctx.generate(temperature=0, n_predict=64):
            print(piece, end="", flush=True)

Errors raise EdgeLlmError with the library's message and status.
"""
import ctypes
import ctypes.util
import os
import queue
import threading

API_VERSION = 2  # EDGELLM_API_VERSION this binding was written for

OK = 0
ERR_BUFFER_TOO_SMALL = -3
STOP_REASONS = {0: "eog", 1: "n_predict", 2: "callback", 3: "cancelled", 4: "context_full"}
LOAD_MODES = {"auto": 0, "mmap": 1, "hugepages": 2}
KV_TYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 8}
OVERFLOW = {"stop": 0, "shift": 1, "window": 2}

c_int32, c_uint32, c_int64, c_uint64 = ctypes.c_int32, ctypes.c_uint32, ctypes.c_int64, ctypes.c_uint64


class EdgeLlmError(RuntimeError):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


# The structs, field for field as in edgellm.h.
class ModelOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("n_threads", c_int32), ("load_mode", c_int32),
                ("pin_threads", c_int32), ("memory_limit", c_int64)]


class ModelInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("n_vocab", c_int32), ("n_ctx_train", c_int64), ("n_layer", c_int32),
                ("n_embd", c_int32), ("n_head", c_int32), ("n_head_kv", c_int32), ("n_params", c_int64),
                ("weights_bytes", c_int64), ("bos", c_int32), ("eos", c_int32), ("has_tokenizer", c_int32),
                ("has_chat_template", c_int32)]


class ContextOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("n_ctx", c_int32), ("n_batch", c_int32), ("type_k", c_int32),
                ("type_v", c_int32), ("overflow", c_int32), ("n_keep", c_int32), ("n_window", c_int32),
                ("spill_path", ctypes.c_char_p), ("swa_full", c_int32)]


class MemoryPlan(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("fits", c_int32), ("n_ctx", c_int64), ("n_batch", c_int64),
                ("weights_bytes", c_int64), ("weights_resident_bytes", c_int64), ("kv_bytes", c_int64),
                ("buffers_bytes", c_int64), ("overhead_bytes", c_int64), ("footprint_bytes", c_int64),
                ("total_bytes", c_int64), ("memory_limit", c_int64)]


class ContextInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("n_ctx", c_int32), ("n_batch", c_int32), ("n_past", c_int32),
                ("n_threads", c_int32), ("released", c_int32), ("kv_bytes", c_int64), ("n_prefilled", c_int64),
                ("prefill_ms", ctypes.c_double), ("n_generated", c_int64), ("generate_ms", ctypes.c_double)]


class Sampling(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("temperature", ctypes.c_float), ("top_k", c_int32),
                ("top_p", ctypes.c_float), ("min_p", ctypes.c_float), ("repeat_penalty", ctypes.c_float),
                ("repeat_last_n", c_int32), ("n_predict", c_int32), ("seed", c_uint64)]


class GenerateResult(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("n_generated", c_int32), ("stop_reason", c_int32),
                ("n_past", c_int32), ("generate_ms", ctypes.c_double)]


TOKEN_CALLBACK = ctypes.CFUNCTYPE(c_int32, c_int32, ctypes.POINTER(ctypes.c_char), c_int32, ctypes.c_void_p)
LOG_CALLBACK = ctypes.CFUNCTYPE(None, c_int32, ctypes.c_char_p, ctypes.c_void_p)

_lib = None


def load_library(path=None):
    """Loads libedgellm once and declares every function's signature."""
    global _lib
    if _lib is not None:
        return _lib
    path = path or os.environ.get("EDGELLM_LIBRARY") or ctypes.util.find_library("edgellm")
    if not path:
        raise OSError("libedgellm not found: set EDGELLM_LIBRARY to its path")
    lib = ctypes.CDLL(path)
    P, VP = ctypes.POINTER, ctypes.c_void_p
    sigs = {
        "edgellm_version": (ctypes.c_char_p, []),
        "edgellm_api_version": (c_int32, []),
        "edgellm_last_error": (ctypes.c_char_p, [VP]),
        "edgellm_set_log_callback": (c_int32, [LOG_CALLBACK, VP, c_int32]),
        "edgellm_model_options_init": (None, [P(ModelOptions)]),
        "edgellm_model_load": (c_int32, [ctypes.c_char_p, P(ModelOptions), P(VP)]),
        "edgellm_model_free": (c_int32, [VP]),
        "edgellm_model_info_init": (None, [P(ModelInfo)]),
        "edgellm_model_info_get": (c_int32, [VP, P(ModelInfo)]),
        "edgellm_model_metadata": (c_int32, [VP, ctypes.c_char_p, ctypes.c_char_p, c_int32, P(c_int32)]),
        "edgellm_context_options_init": (None, [P(ContextOptions)]),
        "edgellm_memory_plan_init": (None, [P(MemoryPlan)]),
        "edgellm_model_plan": (c_int32, [VP, P(ContextOptions), P(MemoryPlan)]),
        "edgellm_context_create": (c_int32, [VP, P(ContextOptions), P(VP)]),
        "edgellm_context_free": (c_int32, [VP]),
        "edgellm_context_info_init": (None, [P(ContextInfo)]),
        "edgellm_context_info_get": (c_int32, [VP, P(ContextInfo)]),
        "edgellm_tokenize": (c_int32, [VP, ctypes.c_char_p, c_int32, c_int32, c_int32, P(c_int32), c_int32,
                                       P(c_int32)]),
        "edgellm_detokenize": (c_int32, [VP, P(c_int32), c_int32, ctypes.c_char_p, c_int32, P(c_int32)]),
        "edgellm_apply_chat_template": (c_int32, [VP, ctypes.c_char_p, ctypes.c_char_p, c_int32, ctypes.c_char_p,
                                                  c_int32, P(c_int32)]),
        "edgellm_prefill": (c_int32, [VP, P(c_int32), c_int32]),
        "edgellm_sampling_init": (None, [P(Sampling)]),
        "edgellm_generate_result_init": (None, [P(GenerateResult)]),
        "edgellm_generate": (c_int32, [VP, P(Sampling), TOKEN_CALLBACK, VP, P(GenerateResult)]),
        "edgellm_cancel": (c_int32, [VP]),
        "edgellm_reset": (c_int32, [VP]),
        "edgellm_session_save": (c_int32, [VP, ctypes.c_char_p]),
        "edgellm_session_load": (c_int32, [VP, ctypes.c_char_p]),
        "edgellm_memory_pressure": (c_int32, [VP, c_int32]),
        "edgellm_set_thermal_state": (c_int32, [VP, c_int32]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    if lib.edgellm_api_version() != API_VERSION:
        raise OSError(f"{path} has API version {lib.edgellm_api_version()}, this binding is for {API_VERSION}")
    _lib = lib
    return lib


def _check(status, handle):
    if status != OK:
        raise EdgeLlmError(status, _lib.edgellm_last_error(handle).decode("utf-8", "replace"))


def version():
    return load_library().edgellm_version().decode()


def _text_call(fn, handle, *args):
    """Calls a function that writes text into (buffer, capacity, length): asks the size first."""
    length = c_int32(0)
    status = fn(handle, *args, None, 0, ctypes.byref(length))
    if status not in (OK, ERR_BUFFER_TOO_SMALL):
        _check(status, handle)
    buf = ctypes.create_string_buffer(length.value + 1)
    _check(fn(handle, *args, buf, len(buf), ctypes.byref(length)), handle)
    return buf.raw[:length.value].decode("utf-8")


class Model:
    def __init__(self, path, n_threads=0, load_mode="auto", memory_limit=0, library=None):
        lib = load_library(library)
        opt = ModelOptions()
        lib.edgellm_model_options_init(ctypes.byref(opt))
        opt.n_threads, opt.load_mode, opt.memory_limit = n_threads, LOAD_MODES[load_mode], memory_limit
        handle = ctypes.c_void_p()
        _check(lib.edgellm_model_load(os.fsencode(path), ctypes.byref(opt), ctypes.byref(handle)), None)
        self._h = handle

    def close(self):
        if self._h:
            _check(_lib.edgellm_model_free(self._h), self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def info(self):
        i = ModelInfo()
        _lib.edgellm_model_info_init(ctypes.byref(i))
        _check(_lib.edgellm_model_info_get(self._h, ctypes.byref(i)), self._h)
        return {name: getattr(i, name) for name, _ in ModelInfo._fields_ if name != "struct_size"}

    def metadata(self, key):
        return _text_call(_lib.edgellm_model_metadata, self._h, key.encode())

    def plan(self, **context_options):
        p = MemoryPlan()
        _lib.edgellm_memory_plan_init(ctypes.byref(p))
        opt = _context_options(**context_options)
        _check(_lib.edgellm_model_plan(self._h, ctypes.byref(opt), ctypes.byref(p)), self._h)
        return {name: getattr(p, name) for name, _ in MemoryPlan._fields_ if name != "struct_size"}

    def tokenize(self, text, add_bos=True, parse_special=True):
        data = text.encode("utf-8")
        n = c_int32(0)
        status = _lib.edgellm_tokenize(self._h, data, len(data), add_bos, parse_special, None, 0, ctypes.byref(n))
        if status not in (OK, ERR_BUFFER_TOO_SMALL):
            _check(status, self._h)
        ids = (c_int32 * max(n.value, 1))()
        _check(_lib.edgellm_tokenize(self._h, data, len(data), add_bos, parse_special, ids, n.value, ctypes.byref(n)),
               self._h)
        return list(ids[:n.value])

    def detokenize(self, ids):
        arr = (c_int32 * max(len(ids), 1))(*ids)
        return _text_call(_lib.edgellm_detokenize, self._h, arr, len(ids))

    def apply_chat_template(self, messages_json, template=None, add_generation_prompt=True):
        name = template.encode() if template else None
        return _text_call(_lib.edgellm_apply_chat_template, self._h, name, messages_json.encode("utf-8"),
                          add_generation_prompt)

    def context(self, **options):
        return Context(self, **options)


def _context_options(n_ctx=0, n_batch=512, type_k="f16", type_v="f16", overflow="stop", n_keep=0, n_window=0,
                     spill_path=None, swa_full=False):
    o = ContextOptions()
    _lib.edgellm_context_options_init(ctypes.byref(o))
    o.n_ctx, o.n_batch, o.type_k, o.type_v = n_ctx, n_batch, KV_TYPES[type_k], KV_TYPES[type_v]
    o.overflow, o.n_keep, o.n_window = OVERFLOW[overflow], n_keep, n_window
    o.spill_path = os.fsencode(spill_path) if spill_path else None
    o.swa_full = 1 if swa_full else 0
    return o


class Context:
    def __init__(self, model, **options):
        self.model = model  # keeps the Python object (and so the handle) alive
        opt = _context_options(**options)
        handle = ctypes.c_void_p()
        _check(_lib.edgellm_context_create(model._h, ctypes.byref(opt), ctypes.byref(handle)), model._h)
        self._h = handle

    def close(self):
        if self._h:
            _check(_lib.edgellm_context_free(self._h), self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def prefill(self, ids):
        arr = (c_int32 * max(len(ids), 1))(*ids)
        _check(_lib.edgellm_prefill(self._h, arr, len(ids)), self._h)

    def generate(self, temperature=0.8, top_k=40, top_p=0.95, min_p=0.05, repeat_penalty=1.0, repeat_last_n=64,
                 seed=0xED6E, n_predict=-1):
        """Yields (token id, text piece) as they are generated. The model runs
        on a worker thread, one token ahead of the loop at most: each token
        waits for the loop to ask for the next, so breaking out of the loop
        stops the generation right there (stop reason "callback")."""
        s = Sampling()
        _lib.edgellm_sampling_init(ctypes.byref(s))
        s.temperature, s.top_k, s.top_p, s.min_p = temperature, top_k, top_p, min_p
        s.repeat_penalty, s.repeat_last_n, s.seed, s.n_predict = repeat_penalty, repeat_last_n, seed, n_predict
        q, ack = queue.Queue(), queue.Queue()
        done = object()

        def on_token(token, piece, length, _user):
            q.put((token, ctypes.string_at(piece, length).decode("utf-8")))
            return 0 if ack.get() else 1  # wait for the loop: go on, or stop here

        cb = TOKEN_CALLBACK(on_token)
        self.result = GenerateResult()
        _lib.edgellm_generate_result_init(ctypes.byref(self.result))
        failure = []

        def work():
            try:
                _check(_lib.edgellm_generate(self._h, ctypes.byref(s), cb, None, ctypes.byref(self.result)), self._h)
            except EdgeLlmError as e:
                failure.append(e)
            q.put(done)

        t = threading.Thread(target=work)
        t.start()
        try:
            while (item := q.get()) is not done:
                yield item
                ack.put(True)
        finally:
            if t.is_alive():
                ack.put(False)  # the loop was left early: the waiting callback stops the generation
            t.join()
        if failure:
            raise failure[0]

    def cancel(self):
        _check(_lib.edgellm_cancel(self._h), self._h)

    def reset(self):
        _check(_lib.edgellm_reset(self._h), self._h)

    def info(self):
        i = ContextInfo()
        _lib.edgellm_context_info_init(ctypes.byref(i))
        _check(_lib.edgellm_context_info_get(self._h, ctypes.byref(i)), self._h)
        return {name: getattr(i, name) for name, _ in ContextInfo._fields_ if name != "struct_size"}

    def save(self, path):
        _check(_lib.edgellm_session_save(self._h, os.fsencode(path)), self._h)

    def load(self, path):
        _check(_lib.edgellm_session_load(self._h, os.fsencode(path)), self._h)

    def memory_pressure(self, level):
        _check(_lib.edgellm_memory_pressure(self._h, level), self._h)

    def set_thermal_state(self, state):
        _check(_lib.edgellm_set_thermal_state(self._h, state), self._h)
