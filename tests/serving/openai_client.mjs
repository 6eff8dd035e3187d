// Drives izwi-server with the official OpenAI client and prints what it got as one JSON line.
// Usage: node openai_client.mjs BASE_URL API_KEY TEXT_MODEL ASR_MODEL TTS_MODEL AUDIO_FILE
import fs from 'node:fs';
import OpenAI from 'openai';

const [baseURL, apiKey, textModel, asrModel, ttsModel, audioFile] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const messages = [{ role: 'user', content: 'hello there' }];
const out = {};

const chat = await client.chat.completions.create({ model: textModel, messages, max_tokens: 8, temperature: 0 });
out.chat = { text: chat.choices[0].message.content, finish_reason: chat.choices[0].finish_reason, usage: chat.usage };

const stream = await client.chat.completions.create({
  model: textModel, messages, max_tokens: 8, temperature: 0, stream: true, stream_options: { include_usage: true },
});
let streamed = '';
let usage = null;
let finish = null;
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  for (const choice of chunk.choices) {
    streamed += choice.delta.content ?? '';
    finish = choice.finish_reason ?? finish;
  }
}
out.chat_stream = { text: streamed, finish_reason: finish, usage };

const completion = await client.completions.create({ model: textModel, prompt: 'hello', max_tokens: 6, temperature: 0 });
out.completion = { text: completion.choices[0].text, usage: completion.usage };

// Log probabilities: chat whole and streamed, completions echo scoring, and one out of range.
const lpRequest = { model: textModel, messages, max_tokens: 8, temperature: 0, logprobs: true, top_logprobs: 3 };
const chatLp = await client.chat.completions.create(lpRequest);
out.chat_logprobs = chatLp.choices[0].logprobs;
const content = [];
for await (const chunk of await client.chat.completions.create({ ...lpRequest, stream: true })) {
  for (const choice of chunk.choices) content.push(...(choice.logprobs?.content ?? []));
}
out.chat_logprobs_stream = { content };
const echoed = await client.completions.create({ model: textModel, prompt: 'hello', max_tokens: 0, echo: true, logprobs: 2 });
out.completion_echo = { text: echoed.choices[0].text, finish_reason: echoed.choices[0].finish_reason, logprobs: echoed.choices[0].logprobs };
try {
  await client.completions.create({ model: textModel, prompt: 'hello', max_tokens: 1, logprobs: 21 });
  out.logprobs_21 = 'no error';
} catch (e) {
  out.logprobs_21 = { status: e.status, param: e.param };
}

const transcription = await client.audio.transcriptions.create({ model: asrModel, file: fs.createReadStream(audioFile) });
out.transcription = { text: transcription.text };

const speech = await client.audio.speech.create({
  model: ttsModel, voice: 'alice', input: 'hi', response_format: 'pcm', temperature: 0, max_frames: 6,
});
out.speech_pcm_base64 = Buffer.from(await speech.arrayBuffer()).toString('base64');

try {
  await client.chat.completions.create({ model: 'no-such-model', messages, max_tokens: 1 });
  out.unknown_model = 'no error';
} catch (e) {
  out.unknown_model = { status: e.status, code: e.code, param: e.param };
}
console.log(JSON.stringify(out));
