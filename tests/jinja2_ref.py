#!/usr/bin/env python3
# Reference renderer for edgellm's chat-template tests: Python's jinja2 set up
# as transformers' apply_chat_template sets it up (render_jinja_template in
# transformers/utils/chat_template_utils.py), which is what model authors test
# their templates with:
#   ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
#                                 extensions=[loopcontrols])
#   + raise_exception, strftime_now, transformers' tojson filter, and its
#   {% generation %} tag (AssistantTracker: renders its body unchanged when
#   no assistant mask is asked for, as in apply_chat_template's default).
#
# Context, in this order (later keys win), exactly as `edgellm template` and
# tests/jinja-ref/render.mjs build it: bos_token, eos_token, the extra
# variables, messages, add_generation_prompt. A messages file holds either an
# OpenAI-style messages array, or an object with "messages" and extra
# variables beside it (e.g. "tools").
#
# One render:
#   python3 jinja2_ref.py TEMPLATE.jinja MESSAGES.json [--add-generation-prompt]
#           [--bos-token T] [--eos-token T]
#   prints the prompt (no newline added); on a template error prints
#   "error: TYPE: message" to stderr and exits 1.
# Many renders (one interpreter start-up for a whole test):
#   python3 jinja2_ref.py --batch JOBS.json
#   JOBS.json: [{"template": PATH, "messages": PATH, "add_generation_prompt": bool,
#                "bos_token": S, "eos_token": S, "out": PATH}, ...]
#   writes each prompt to `out`, or the error to `out + ".err"`.
# Exit status 3 when jinja2 is not installed (the tests skip then).
import json
import sys
from datetime import datetime

try:
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:
    sys.stderr.write("jinja2 is not installed (Debian: apt-get install python3-jinja2)\n")
    sys.exit(3)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


# transformers' definition: json.dumps, non-ASCII kept, keys in insertion order.
def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


class AssistantTracker(jinja2.ext.Extension):
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


ENV = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[AssistantTracker, loopcontrols])
ENV.filters["tojson"] = tojson
ENV.globals["raise_exception"] = raise_exception
ENV.globals["strftime_now"] = strftime_now


def render(template_path, messages_path, job):
    with open(template_path, encoding="utf-8") as f:
        source = f.read()
    with open(messages_path, encoding="utf-8") as f:
        conv = json.load(f)
    extra = {}
    messages = conv
    if not isinstance(conv, list):
        if not isinstance(conv, dict) or not isinstance(conv.get("messages"), list):
            raise ValueError('messages file: expected an array of messages or an object with a "messages" array')
        extra = {k: v for k, v in conv.items() if k != "messages"}
        messages = conv["messages"]
    context = {"bos_token": job.get("bos_token", ""), "eos_token": job.get("eos_token", "")}
    context.update(extra)
    context["messages"] = messages
    context["add_generation_prompt"] = bool(job.get("add_generation_prompt", False))
    return ENV.from_string(source).render(**context)


def describe(e):
    return type(e).__name__ + ": " + str(e)


def main(argv):
    if argv and argv[0] == "--batch":
        with open(argv[1], encoding="utf-8") as f:
            jobs = json.load(f)
        for job in jobs:
            try:
                text = render(job["template"], job["messages"], job)
                with open(job["out"], "w", encoding="utf-8", newline="") as f:
                    f.write(text)
            except Exception as e:  # any failure of the template is a result to compare
                with open(job["out"] + ".err", "w", encoding="utf-8") as f:
                    f.write(describe(e))
        return 0
    job, pos, i = {}, [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--add-generation-prompt":
            job["add_generation_prompt"] = True
        elif a in ("--bos-token", "--eos-token"):
            i += 1
            job[a[2:].replace("-", "_")] = argv[i]
        else:
            pos.append(a)
        i += 1
    if len(pos) != 2:
        sys.stderr.write("usage: jinja2_ref.py TEMPLATE.jinja MESSAGES.json [--add-generation-prompt] "
                         "[--bos-token T] [--eos-token T] | --batch JOBS.json\n")
        return 2
    try:
        sys.stdout.write(render(pos[0], pos[1], job))
    except Exception as e:
        sys.stderr.write("error: " + describe(e) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
