// Asks izwi-server for n > 1 choices with the official OpenAI client, whole and streamed, and for
// the bad counts, and prints what it got as one JSON line.
// Usage: node choices_client.mjs BASE_URL API_KEY TEXT_MODEL
import OpenAI from 'openai';

const [baseURL, apiKey, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const messages = [{ role: 'user', content: 'tell me about the sea' }];
const out = {};

// Whole answers: each choice's index, text, finish reason and logprobs, and the usage.
const whole = (r, chat) => ({
  choices: r.choices.map((c) => ({
    index: c.index,
    text: chat ? c.message.content : c.text,
    finish_reason: c.finish_reason,
    logprobs: c.logprobs ?? null,
  })),
  usage: r.usage,
});

// A stream's events reassembled per choice index; chunks of a choice after its finish reason counted.
async function streamed(stream, chat) {
  const choices = {};
  let usage = null;
  let afterFinish = 0;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      const mine = (choices[c.index] ??= { index: c.index, text: '', finish_reason: null, logprobs: null });
      if (mine.finish_reason !== null) ++afterFinish;
      mine.text += (chat ? c.delta.content : c.text) ?? '';
      if (c.logprobs) {
        if (chat) {
          mine.logprobs ??= { content: [], refusal: null };
          mine.logprobs.content.push(...(c.logprobs.content ?? []));
        } else {
          mine.logprobs ??= { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
          for (const key of ['tokens', 'token_logprobs', 'top_logprobs', 'text_offset']) {
            mine.logprobs[key].push(...c.logprobs[key]);
          }
        }
      }
      mine.finish_reason = c.finish_reason ?? mine.finish_reason;
    }
  }
  return { choices: Object.values(choices).sort((a, b) => a.index - b.index), usage, after_finish: afterFinish };
}

const greedy = { model, messages, n: 3, max_tokens: 8, temperature: 0 };
out.chat_greedy = whole(await client.chat.completions.create(greedy), true);
out.chat_greedy_stream = await streamed(
  await client.chat.completions.create({ ...greedy, stream: true, stream_options: { include_usage: true } }), true);

const sampled = { model, messages, n: 4, max_tokens: 8, temperature: 1, seed: 5, logprobs: true, top_logprobs: 2 };
out.chat_sampled = whole(await client.chat.completions.create(sampled), true);
out.chat_sampled_again = whole(await client.chat.completions.create(sampled), true);
out.chat_sampled_stream = await streamed(
  await client.chat.completions.create({ ...sampled, stream: true, stream_options: { include_usage: true } }), true);

const completion = { model, prompt: 'the sea is', n: 3, max_tokens: 6, temperature: 1, seed: 9, logprobs: 2, echo: true };
out.completion = whole(await client.completions.create(completion), false);
out.completion_stream = await streamed(await client.completions.create({ ...completion, stream: true }), false);

// Each a 400 naming its field.
const refused = async (body, chat) => {
  try {
    await (chat ? client.chat.completions.create(body) : client.completions.create(body));
    return 'no error';
  } catch (e) {
    return { status: e.status, param: e.param };
  }
};
out.bad = {
  n_0: await refused({ model, messages, n: 0, max_tokens: 1 }, true),
  n_129: await refused({ model, messages, n: 129, max_tokens: 1 }, true),
  n_text: await refused({ model, messages, n: 'two', max_tokens: 1 }, true),
  best_of: await refused({ model, prompt: 'x', n: 2, best_of: 3, max_tokens: 1 }, false),
  logprobs_21: await refused({ model, prompt: 'x', n: 2, logprobs: 21, max_tokens: 1 }, false),
  top_logprobs_21: await refused({ model, messages, n: 2, logprobs: true, top_logprobs: 21, max_tokens: 1 }, true),
};
out.best_of_n = whole(await client.completions.create({ model, prompt: 'x', n: 2, best_of: 2, max_tokens: 2 }), false);
console.log(JSON.stringify(out));
