// Reference encodings from the Hugging Face tokenizers library (Rust, through the
// @anush008/tokenizers Node binding pinned in package-lock.json) for izwi's parity tests.
// Usage: node reference.js tokenizer.json cases.json  (cases.json: a JSON list of strings)
// Prints {"library": version, "cases": [{text, ids, ids_special, decoded, decoded_skip}]}.
"use strict";
const fs = require("fs");
const { Tokenizer } = require("@anush008/tokenizers");

async function main() {
  const [tokenizerPath, casesPath] = process.argv.slice(2);
  const tokenizer = Tokenizer.fromFile(tokenizerPath);
  const texts = JSON.parse(fs.readFileSync(casesPath, "utf8"));
  const cases = [];
  for (const text of texts) {
    const plain = await tokenizer.encode(text, null, { addSpecialTokens: false });
    const special = await tokenizer.encode(text, null, { addSpecialTokens: true });
    const ids = plain.getIds();
    cases.push({
      text,
      ids,
      ids_special: special.getIds(),
      decoded: await tokenizer.decode(ids, false),
      decoded_special: await tokenizer.decode(special.getIds(), false),
      decoded_skip: await tokenizer.decode(special.getIds(), true),
    });
  }
  const version = require("@anush008/tokenizers/package.json").version;
  process.stdout.write(JSON.stringify({ library: "@anush008/tokenizers " + version, cases }));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
