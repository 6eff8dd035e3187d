// Live transcription over izwi-server's WebSocket with the `ws` npm client, speaking OpenAI's
// realtime transcription events; prints what it got as one JSON line.
// Usage: node realtime_client.mjs WS_URL API_KEY MODEL PCM16_FILE SAMPLE_RATE
// WS_URL is ws://HOST:PORT (the path /v1/realtime is added); PCM16_FILE holds mono little-endian
// 16-bit samples at SAMPLE_RATE.
import fs from 'node:fs';
import WebSocket from 'ws';

const [base, apiKey, model, pcmFile, rate] = process.argv.slice(2);
const out = {};

/// Opens a socket and collects its events; `next(type)` waits for the next event of that type.
function connect(url, headers, protocols = []) {
  const socket = new WebSocket(url, protocols, { headers });
  const events = [];
  const waiting = [];
  socket.on('message', (data) => {
    const event = JSON.parse(data.toString());
    events.push(event);
    for (const w of waiting.splice(0)) w();
  });
  const closed = new Promise((resolve) => socket.on('close', (code) => resolve(code)));
  const opened = new Promise((resolve, reject) => {
    socket.on('open', () => resolve(null));
    socket.on('unexpected-response', (_, res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(body) }));
    });
    socket.on('error', reject);
  });
  let seen = 0;
  async function next(type) {
    const deadline = Date.now() + 60000;
    for (;;) {
      while (seen < events.length) {
        const event = events[seen++];
        if (event.type === type) return event;
      }
      if (Date.now() > deadline) throw new Error(`no ${type} event within 60 s; got ${JSON.stringify(events)}`);
      await new Promise((resolve) => { waiting.push(resolve); setTimeout(resolve, 100); });
    }
  }
  const send = (event) => socket.send(JSON.stringify(event));
  return { socket, events, opened, closed, next, send };
}

const auth = { Authorization: `Bearer ${apiKey}` };
out.without_key = await connect(`${base}/v1/realtime?model=${model}`, {}).opened;
out.wrong_path = await connect(`${base}/v1/elsewhere`, auth).opened;
// As a browser sends the key (it cannot set headers): a subprotocol beside "realtime".
out.wrong_key_protocol =
    await connect(`${base}/v1/realtime?model=${model}`, {}, ['realtime', 'openai-insecure-api-key.wrong']).opened;
const viaProtocol = connect(`${base}/v1/realtime?model=${model}`, {}, ['realtime', `openai-insecure-api-key.${apiKey}`]);
await viaProtocol.opened;
out.key_protocol = { protocol: viaProtocol.socket.protocol, created: (await viaProtocol.next('transcription_session.created')).type };
viaProtocol.socket.close();

const live = connect(`${base}/v1/realtime?intent=transcription`, auth);
await live.opened;
out.created = (await live.next('transcription_session.created')).session;
live.send({ type: 'input_audio_buffer.commit', event_id: 'commit-empty' });
out.commit_empty = (await live.next('error')).error;
live.send({ type: 'input_audio_buffer.append', audio: 'not base64!' });
out.bad_audio = (await live.next('error')).error;
live.send({ type: 'response.create' });
out.unknown_type = (await live.next('error')).error;
live.send({ type: 'session.update', session: { type: 'transcription', audio: { input: {
  format: { type: 'audio/pcm', rate: Number(rate) }, transcription: { model } } } } });
out.updated = (await live.next('session.updated')).session;

// 100 ms per append, as a microphone would send it.
const pcm = fs.readFileSync(pcmFile);
const chunkBytes = Math.round(Number(rate) / 10) * 2;
for (let i = 0; i < pcm.length; i += chunkBytes) {
  live.send({ type: 'input_audio_buffer.append', audio: pcm.subarray(i, i + chunkBytes).toString('base64') });
}
live.send({ type: 'input_audio_buffer.commit' });
out.committed = await live.next('input_audio_buffer.committed');
const completed = await live.next('conversation.item.input_audio_transcription.completed');
out.completed = completed;
out.deltas = live.events
  .filter((e) => e.type === 'conversation.item.input_audio_transcription.delta' && e.item_id === completed.item_id)
  .map((e) => e.delta);

// A second item on the same socket, cleared before it is committed: no transcript comes for it.
live.send({ type: 'input_audio_buffer.append', audio: pcm.subarray(0, chunkBytes).toString('base64') });
live.send({ type: 'input_audio_buffer.clear' });
await live.next('input_audio_buffer.cleared');
live.send({ type: 'input_audio_buffer.commit' });
out.after_clear = (await live.next('error')).error;
out.event_types = live.events.map((e) => e.type);
live.socket.close();
out.close_code = await live.closed;
console.log(JSON.stringify(out));
