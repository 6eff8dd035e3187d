// A load of concurrent streaming chat clients (Node's fetch): every fourth hangs up after its
// second chunk. Prints {"completed": N, "hung_up": M, "failed": [...]} as one JSON line.
// Usage: node load_client.mjs BASE_URL MODEL CLIENTS MAX_TOKENS
const [baseURL, model, clients, maxTokens] = process.argv.slice(2);
const body = JSON.stringify({
  model, messages: [{ role: 'user', content: 'hi' }], max_tokens: Number(maxTokens), temperature: 0, stream: true,
});

async function one(i) {
  const controller = new AbortController();
  const hangUp = i % 4 === 0;
  let text = '';
  let chunks = 0;
  try {
    const res = await fetch(`${baseURL}/v1/chat/completions`, {
      method: 'POST', body, headers: { 'Content-Type': 'application/json' }, signal: controller.signal,
    });
    if (res.status !== 200) return { i, status: res.status, body: await res.text() };
    const decoder = new TextDecoder();
    for await (const piece of res.body) {
      text += decoder.decode(piece, { stream: true });
      if (hangUp && ++chunks >= 2) {
        controller.abort();
        return 'hung_up';
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
