// Drives izwi-server's Chat Completions audio with the official OpenAI client and prints what it
// got as one JSON line: a spoken answer whole and streamed, its next turn by audio.id, a
// transcription-style text answer, and the 400s of bad input.
// Usage: node chat_audio_client.mjs BASE_URL API_KEY AUDIO_MODEL TEXT_MODEL AUDIO_FILE MAX_ITEMS
import fs from 'node:fs';
import OpenAI from 'openai';

const [baseURL, apiKey, audioModel, textModel, audioFile, maxItems] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const wav = fs.readFileSync(audioFile).toString('base64');
const system = { role: 'system', content: 'Respond with interleaved text and audio.' };
const user = { role: 'user', content: [{ type: 'input_audio', input_audio: { data: wav, format: 'wav' } }] };
const spoken = {
  model: audioModel, modalities: ['text', 'audio'], audio: { voice: 'default', format: 'pcm16' },
  temperature: 0, max_completion_tokens: Number(maxItems),
};
const out = {};

const whole = await client.chat.completions.create({ ...spoken, messages: [system, user] });
const message = whole.choices[0].message;
out.whole = { content: message.content, audio: message.audio, finish_reason: whole.choices[0].finish_reason, usage: whole.usage };

// The same answer in each file format.
out.formats = {};
for (const format of ['wav', 'flac', 'mp3', 'opus']) {
  const answer = await client.chat.completions.create({ ...spoken, audio: { voice: 'default', format }, messages: [system, user] });
  out.formats[format] = answer.choices[0].message.audio.data;
}

const pieces = [];
let transcript = '';
let id = null;
let expiresAt = null;
let usage = null;
let finish = null;
const stream = await client.chat.completions.create({
  ...spoken, messages: [system, user], stream: true, stream_options: { include_usage: true },
});
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  for (const choice of chunk.choices) {
    const audio = choice.delta.audio;
    if (audio?.id) id = audio.id;
    if (audio?.data) pieces.push(Buffer.from(audio.data, 'base64'));
    if (audio?.transcript) transcript += audio.transcript;
    if (audio?.expires_at) expiresAt = audio.expires_at;
    finish = choice.finish_reason ?? finish;
  }
}
out.stream = { id, data: Buffer.concat(pieces).toString('base64'), transcript, expires_at: expiresAt, finish_reason: finish, usage };

// The next turn gives the spoken answer back by its id: the conversation so far is in the prefix cache.
const next = await client.chat.completions.create({
  ...spoken, max_completion_tokens: 12, messages: [system, user, { role: 'assistant', audio: { id: message.audio.id } }, user],
});
out.next_turn = { transcript: next.choices[0].message.audio.transcript, usage: next.usage };

// Audio in, text out: transcription-style chat (sequential).
const asr = await client.chat.completions.create({
  model: audioModel, messages: [{ role: 'system', content: 'Perform ASR.' }, user], temperature: 0, max_completion_tokens: 12,
});
out.text_answer = { content: asr.choices[0].message.content, audio: asr.choices[0].message.audio ?? null, usage: asr.usage };

// The same turn given back as text: the cache holds the conversation up to it.
const asText = await client.chat.completions.create({
  ...spoken, max_completion_tokens: 12,
  messages: [system, user, { role: 'assistant', content: message.audio.transcript }, user],
});
out.text_turn = { usage: asText.usage };

let asrStreamed = '';
for await (const chunk of await client.chat.completions.create({
  model: audioModel, messages: [{ role: 'system', content: 'Perform ASR.' }, user], temperature: 0, max_completion_tokens: 12,
  stream: true,
})) {
  for (const choice of chunk.choices) asrStreamed += choice.delta.content ?? '';
}
out.text_answer_stream = { content: asrStreamed };

// The fixture's samples as 16-bit: raw pcm16 at a stated rate reads as the same samples in a 16-bit WAV.
const riff = fs.readFileSync(audioFile);
let rate = 0;
let samples = null;
for (let at = 12; at + 8 <= riff.length;) {
  const id = riff.toString('ascii', at, at + 4);
  const size = riff.readUInt32LE(at + 4);
  if (id === 'fmt ') rate = riff.readUInt32LE(at + 12);
  if (id === 'data') samples = riff.subarray(at + 8, at + 8 + size);
  at += 8 + size + (size & 1);
}
const pcm = Buffer.alloc((samples.length / 4) * 2);
for (let i = 0; i < samples.length / 4; ++i) {
  pcm.writeInt16LE(Math.round(Math.max(-1, Math.min(1, samples.readFloatLE(4 * i))) * 32767), 2 * i);
}
const header = Buffer.alloc(44);
header.write('RIFF', 0, 'ascii'); header.writeUInt32LE(36 + pcm.length, 4); header.write('WAVEfmt ', 8, 'ascii');
header.writeUInt32LE(16, 16); header.writeUInt16LE(1, 20); header.writeUInt16LE(1, 22); header.writeUInt32LE(rate, 24);
header.writeUInt32LE(rate * 2, 28); header.writeUInt16LE(2, 32); header.writeUInt16LE(16, 34);
header.write('data', 36, 'ascii'); header.writeUInt32LE(pcm.length, 40);
const asr16 = async (input_audio) => (await client.chat.completions.create({
  model: audioModel, messages: [{ role: 'system', content: 'Perform ASR.' }, { role: 'user', content: [{ type: 'input_audio', input_audio }] }],
  temperature: 0, max_completion_tokens: 12,
})).choices[0].message.content;
out.pcm16 = {
  raw: await asr16({ data: pcm.toString('base64'), format: 'pcm16', sample_rate: rate }),
  wav: await asr16({ data: Buffer.concat([header, pcm]).toString('base64'), format: 'wav' }),
};

// TTS: the user's text spoken (sequential), in the model's voice and in one of its TTS voices.
const ttsMessages = [{ role: 'system', content: 'Perform TTS.' }, { role: 'user', content: 'hi' }];
const tts = await client.chat.completions.create({ ...spoken, max_completion_tokens: 24, messages: ttsMessages });
out.tts = { transcript: tts.choices[0].message.audio.transcript, data: tts.choices[0].message.audio.data };
const ttsVoice = await client.chat.completions.create({
  ...spoken, audio: { voice: 'us_female', format: 'pcm16' }, max_completion_tokens: 24, messages: ttsMessages,
});
out.tts_voice = { transcript: ttsVoice.choices[0].message.audio.transcript };

const failure = async (name, body) => {
  try {
    await client.chat.completions.create(body);
    out[name] = 'no error';
  } catch (e) {
    out[name] = { status: e.status, param: e.param, message: e.message };
  }
};
const withAudio = (audio) => [system, { role: 'user', content: [{ type: 'input_audio', input_audio: audio }, { type: 'text', text: 'hi' }] }];
await failure('bad_base64', { ...spoken, messages: withAudio({ data: 'not base64!', format: 'wav' }) });
await failure('unreadable', { ...spoken, messages: withAudio({ data: Buffer.from('not audio at all').toString('base64'), format: 'wav' }) });
await failure('voice', { ...spoken, audio: { voice: 'alloy', format: 'pcm16' }, messages: [system, user] });
await failure('odd_pcm16', { ...spoken, messages: withAudio({ data: Buffer.from('abc').toString('base64'), format: 'pcm16' }) });
await failure('voice_in_chat', { ...spoken, audio: { voice: 'us_male', format: 'pcm16' }, messages: [system, user] });
await failure('format', { ...spoken, audio: { voice: 'default', format: 'aac' }, messages: [system, user] });
await failure('stream_format', { ...spoken, audio: { voice: 'default', format: 'wav' }, messages: [system, user], stream: true });
await failure('unknown_id', { ...spoken, messages: [system, user, { role: 'assistant', audio: { id: 'audio_0000' } }, user] });
await failure('text_model_audio_in', { model: textModel, messages: [system, user], max_completion_tokens: 2 });
await failure('text_model_audio_out', {
  model: textModel, modalities: ['text', 'audio'], audio: { voice: 'default', format: 'wav' },
  messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 2,
});
console.log(JSON.stringify(out));
