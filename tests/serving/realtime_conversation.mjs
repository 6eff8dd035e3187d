// A speech-to-speech conversation over izwi-server's realtime WebSocket with the official
// client's realtime class (openai/realtime/ws), speaking OpenAI's GA Realtime events; prints
// what it saw as one JSON line.
// Usage: node realtime_conversation.mjs WS_PORT API_KEY MODEL SPEECH_PCM16 SILENCE_PCM16 RATE
// The PCM16 files hold mono little-endian 16-bit samples at RATE: a turn's speech, and a pause
// long enough to end a turn.
import fs from 'node:fs';
import net from 'node:net';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';

const [port, apiKey, model, speechFile, silenceFile, rateText] = process.argv.slice(2);
const rate = Number(rateText);
const speech = fs.readFileSync(speechFile);
const silence = fs.readFileSync(silenceFile);
const client = new OpenAI({ apiKey, baseURL: `http://127.0.0.1:${port}/v1` });

/// The class always asks for wss://; izwi's listener is plain ws, so the socket is plain TCP.
function open() {
  const rt = new OpenAIRealtimeWS({ model, options: { createConnection: (o) => net.connect(Number(o.port), o.host) } },
                                  client);
  const events = [];
  const waiting = [];
  rt.on('event', (event) => {
    events.push(event);
    for (const w of waiting.splice(0)) w();
  });
  rt.on('error', () => {});  // error events are in `events` too; the checks read them there
  let seen = 0;
  /// The next event of `type` (or matching `pred`) after the last one returned.
  async function next(type, pred = () => true) {
    const deadline = Date.now() + 120000;
    for (;;) {
      while (seen < events.length) {
        const event = events[seen++];
        if (event.type === type && pred(event)) return event;
      }
      if (Date.now() > deadline) {
        throw new Error(`no ${type} within 120 s; got ${JSON.stringify(events.map((e) => e.type))}`);
      }
      await new Promise((resolve) => { waiting.push(resolve); setTimeout(resolve, 50); });
    }
  }
  const opened = new Promise((resolve, reject) => {
    rt.socket.on('open', resolve);
    rt.socket.on('error', reject);
  });
  return { rt, events, next, opened };
}

/// Appends `pcm` in 100 ms pieces, as a microphone would.
function stream(rt, pcm) {
  const piece = Math.round(rate / 10) * 2;
  for (let i = 0; i < pcm.length; i += piece) {
    rt.send({ type: 'input_audio_buffer.append', audio: pcm.subarray(i, i + piece).toString('base64') });
  }
}

/// What a response left: its status, the audio's samples, the transcript and the usage.
function summary(done, events) {
  const id = done.response.id;
  let samples = 0;
  let transcript = '';
  for (const e of events) {
    if (e.response_id !== id) continue;
    if (e.type === 'response.output_audio.delta') samples += Buffer.from(e.delta, 'base64').length / 2;
    if (e.type === 'response.output_audio_transcript.delta' || e.type === 'response.output_text.delta') {
      transcript += e.delta;
    }
  }
  return { id, status: done.response.status, details: done.response.status_details, samples, transcript,
           done_transcript: done.response.output[0].content[0].transcript ?? done.response.output[0].content[0].text,
           part_type: done.response.output[0].content[0].type, usage: done.response.usage,
           item_id: done.response.output[0].id };
}

const out = {};
const c = open();
await c.opened;
out.created = (await c.next('session.created')).session;

// Bad input and events out of order: each an error event naming the field; the session stays.
c.rt.send({ type: 'input_audio_buffer.append', audio: 'not base64!', event_id: 'bad-audio' });
out.bad_audio = (await c.next('error')).error;
c.rt.send({ type: 'response.cancel' });
out.cancel_idle = (await c.next('error')).error;
c.rt.send({ type: 'response.create' });
out.create_without_turn = (await c.next('error')).error;
c.rt.send({ type: 'conversation.item.create',
            item: { type: 'message', role: 'user', content: [{ type: 'input_audio', audio: '@@@' }] } });
out.bad_item_audio = (await c.next('error')).error;
c.rt.send({ type: 'session.update', session: { type: 'realtime', audio: { input: { turn_detection: { type: 'semantic_vad' } } } } });
out.bad_turn_detection = (await c.next('error')).error;
c.rt.send({ type: 'input_audio_buffer.commit' });
out.commit_empty = (await c.next('error')).error;

c.rt.send({ type: 'session.update', session: {
  type: 'realtime', output_modalities: ['audio'], instructions: 'Respond with interleaved text and audio.',
  max_output_tokens: 16,
  audio: { input: { format: { type: 'audio/pcm', rate },
                    turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 200, silence_duration_ms: 400 } },
           output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'default' } } } });
out.updated = (await c.next('session.updated')).session;

// Two turns, each speech then silence: the server's VAD ends each and answers by itself.
out.turns = [];
for (let turn = 0; turn < 2; ++turn) {
  stream(c.rt, speech);
  stream(c.rt, silence);
  const started = await c.next('input_audio_buffer.speech_started');
  const stopped = await c.next('input_audio_buffer.speech_stopped');
  const committed = await c.next('input_audio_buffer.committed');
  const created = await c.next('response.created');
  const done = await c.next('response.done');
  out.turns.push({ started, stopped, committed, response: summary(done, c.events) });
}

// Barge-in: a longer answer, interrupted by speech as soon as its audio starts coming.
c.rt.send({ type: 'session.update', session: { type: 'realtime', max_output_tokens: 400 } });
await c.next('session.updated');
stream(c.rt, speech);
stream(c.rt, silence);
const interrupted = await c.next('response.created');
await c.next('response.output_audio.delta', (e) => e.response_id === interrupted.response.id);
stream(c.rt, speech);
out.barge_in = summary(await c.next('response.done', (e) => e.response.id === interrupted.response.id), c.events);
out.truncated = c.events.find((e) => e.type === 'conversation.item.truncated') ?? null;
stream(c.rt, silence);
// The turn that interrupted is answered next; a second response.create meanwhile is out of
// order, and response.cancel stops the answer.
const followed = await c.next('response.created');
c.rt.send({ type: 'response.create' });
out.create_while_active = (await c.next('error')).error;
c.rt.send({ type: 'response.cancel' });
out.cancelled = summary(await c.next('response.done', (e) => e.response.id === followed.response.id), c.events);

// The client's own items and response.create, without the VAD, answered in text only.
c.rt.send({ type: 'session.update', session: { type: 'realtime', max_output_tokens: 8, output_modalities: ['text'],
                                                             audio: { input: { turn_detection: null } } } });
out.manual_session = (await c.next('session.updated')).session;
c.rt.send({ type: 'conversation.item.create',
            item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] } });
out.text_item = (await c.next('conversation.item.created')).item;
c.rt.send({ type: 'response.create' });
out.manual = summary(await c.next('response.done'), c.events);

out.event_types = [...new Set(c.events.map((e) => e.type))];
c.rt.close();

// Conversations at once share the engine's batch: two fresh sessions asked the same at the same
// time answer alike (greedy).
const pair = [open(), open()];
await Promise.all(pair.map((p) => p.opened));
for (const p of pair) {
  await p.next('session.created');
  p.rt.send({ type: 'session.update', session: { type: 'realtime', max_output_tokens: 12, audio: { input: { format: { type: 'audio/pcm', rate }, turn_detection: null } } } });
  await p.next('session.updated');
  p.rt.send({ type: 'conversation.item.create',
              item: { type: 'message', role: 'user', content: [{ type: 'input_audio', audio: speech.toString('base64') }] } });
}
for (const p of pair) p.rt.send({ type: 'response.create' });
out.concurrent = await Promise.all(pair.map(async (p) => summary(await p.next('response.done'), p.events)));
for (const p of pair) p.rt.close();
console.log(JSON.stringify(out));
process.exit(0);
