#!/usr/bin/python3
"""Renders chat templates with Jinja2 exactly as transformers' apply_chat_template does.

Usage: chat_template_reference.py CASES.json TEMPLATE.jinja...
Prints a JSON list, one entry per template x conversation x add_generation_prompt x tool set
(none or one of CASES' tool_sets) x kwargs variant: {"template", "conversation", "add_generation_prompt", "tools", "kwargs",
"text"} or, when the template raises, "error" instead of "text".

Run it with Debian's interpreter (/usr/bin/python3 with python3-jinja2).
"""
import json
import os
import sys
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


# transformers.utils.chat_template_utils._compile_jinja_template
def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def main():
    cases = json.load(open(sys.argv[1], encoding="utf-8"))
    env = environment()
    out = []
    for path in sys.argv[2:]:
        with open(path, encoding="utf-8", newline="") as f:
            template = env.from_string(f.read())
        name = os.path.basename(path)
        for conversation in cases["conversations"]:
            for add_generation_prompt in (False, True):
                for tools in [None] + list(cases["tool_sets"]):
                    for kwargs in cases["kwargs_variants"]:
                        # apply_chat_template: render(messages, tools, documents, add_generation_prompt,
                        # **special_tokens_map, **kwargs)
                        context = dict(cases["special_tokens"])
                        context.update(kwargs)
                        entry = {"template": name, "conversation": conversation["name"],
                                 "add_generation_prompt": add_generation_prompt, "tools": tools,
                                 "kwargs": kwargs}
                        try:
                            entry["text"] = template.render(
                                messages=conversation["messages"],
                                tools=cases["tool_sets"][tools] if tools else None, documents=None,
                                add_generation_prompt=add_generation_prompt, **context)
                        except Exception as e:  # the C++ side must fail too
                            entry["error"] = f"{type(e).__name__}: {e}"
                        out.append(entry)
    json.dump(out, sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main()
