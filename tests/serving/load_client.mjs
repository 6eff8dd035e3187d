// A load of concurrent streaming chat clients (Node's fetch): every fourth asks for a long answer
// (HANG_UP_TOKENS, ignore_eos) and hangs up once its first event has arrived, so its stream is surely
// still running when it goes. Prints {"completed": N, "hung_up": M, "failed": [...]} as one JSON line.
// Usage: node load_client.mjs BASE_URL MODEL CLIENTS MAX_TOKENS HANG_UP_TOKENS
const [baseURL, model, clients, maxTokens, hangUpTokens] = process.argv.slice(2);
const bodyOf = (tokens, ignoreEos) => JSON.stringify({
  model, messages: [{ role: 'user', content: 'hi' }], max_tokens: Number(tokens), ignore_eos: ignoreEos,
  temperature: 0, stream: true,
});

async function one(i) {
  const controller = new AbortController();
  const hangUp = i % 4 === 0;
  let text = '';
  try {
    const res = await fetch(`${baseURL}/v1/chat/completions`, {
      method: 'POST',
      body: hangUp ? bodyOf(hangUpTokens, true) : bodyOf(maxTokens, false),
      headers: { 'Content-Type': 'application/json' }, signal: controller.signal,
    });
    if (res.status !== 200) return { i, status: res.status, body: await res.text() };
    const decoder = new TextDecoder();
    for await (const piece of res.body) {
      text += decoder.decode(piece, { stream: true });
      if (hangUp && text.includes('data: ')) {
        controller.abort();
        return text.includes('[DONE]') ? { i, error: 'the stream ended before the client hung up' } : 'hung_up';
      }
    }
  } catch (e) {
    if (hangUp && e.name === 'AbortError') return 'hung_up';
    return { i, error: String(e) };
  }
  return text.includes('data: [DONE]') ? 'completed' : { i, text: text.slice(-200) };
}

const results = await Promise.all(Array.from({ length: Number(clients) }, (_, i) => one(i)));
console.log(JSON.stringify({
  completed: results.filter((r) => r === 'completed').length,
  hung_up: results.filter((r) => r === 'hung_up').length,
  failed: results.filter((r) => typeof r === 'object'),
}));
