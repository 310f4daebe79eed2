// Reference renderer for edgellm's chat-template tests: renders a Jinja chat
// template with @huggingface/jinja (pinned in package-lock.json) exactly the
// way `edgellm template --template-file` does, so the two can be compared
// byte for byte.
//
// Context, in this order (later keys win): bos_token, eos_token, the extra
// variables, messages, add_generation_prompt. A messages file holds either an
// OpenAI-style messages array, or an object with "messages" and extra
// variables beside it (e.g. "tools"), exactly as edgellm reads it.
//
// One render:
//   node render.mjs TEMPLATE.jinja MESSAGES.json [--add-generation-prompt]
//        [--bos-token T] [--eos-token T] [--extra JSON]
//   prints the prompt to stdout (no newline added); on a template error prints
//   "error: ..." to stderr and exits 1.
// Many renders (one node start-up for a whole test):
//   node render.mjs --batch JOBS.json
//   JOBS.json: [{"template": PATH, "messages": PATH, "add_generation_prompt": bool,
//                "bos_token": S, "eos_token": S, "extra": {...}, "out": PATH}, ...]
//   writes each prompt to `out`, or the error message to `out + ".err"`.
import { readFileSync, writeFileSync } from "node:fs";
import { Template } from "@huggingface/jinja";

function render(templatePath, messagesPath, opts) {
  const source = readFileSync(templatePath, "utf8");
  const conv = JSON.parse(readFileSync(messagesPath, "utf8"));
  let messages = conv;
  let fileExtra = {};
  if (!Array.isArray(conv)) {
    if (conv === null || typeof conv !== "object" || !Array.isArray(conv.messages)) {
      throw new Error("messages file: expected an array of messages or an object with a \"messages\" array");
    }
    ({ messages, ...fileExtra } = conv);
  }
  const context = {
    bos_token: opts.bos_token ?? "",
    eos_token: opts.eos_token ?? "",
    ...fileExtra,
    ...(opts.extra ?? {}),
    messages,
    add_generation_prompt: !!opts.add_generation_prompt,
  };
  return new Template(source).render(context);
}

const argv = process.argv.slice(2);
if (argv[0] === "--batch") {
  const jobs = JSON.parse(readFileSync(argv[1], "utf8"));
  for (const job of jobs) {
    try {
      writeFileSync(job.out, render(job.template, job.messages, job));
    } catch (e) {
      writeFileSync(job.out + ".err", String(e && e.message ? e.message : e));
    }
  }
} else {
  const opts = {};
  const pos = [];
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === "--add-generation-prompt") opts.add_generation_prompt = true;
    else if (a === "--bos-token") opts.bos_token = argv[++i];
    else if (a === "--eos-token") opts.eos_token = argv[++i];
    else if (a === "--extra") opts.extra = JSON.parse(argv[++i]);
    else pos.push(a);
  }
  if (pos.length !== 2) {
    process.stderr.write("usage: node render.mjs TEMPLATE.jinja MESSAGES.json [--add-generation-prompt] [--bos-token T] [--eos-token T] [--extra JSON]\n");
    process.exit(2);
  }
  try {
    process.stdout.write(render(pos[0], pos[1], opts));
  } catch (e) {
    process.stderr.write("error: " + String(e && e.message ? e.message : e) + "\n");
    process.exit(1);
  }
}
