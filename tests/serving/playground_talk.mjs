// Drives the playground page's Talk tab in headless Chromium: the fake microphone plays
// AUDIO_FILE once (then silence), the page streams it to a realtime conversation with a
// speech-to-speech model, the server's VAD ends the turn and answers; once the answer plays, prints
// what the page shows (its turns, the answer's transcript so far, the samples it scheduled for
// playing, its status) as one JSON line, saves a screenshot, and stops talking.
// Usage: node playground_talk.mjs SERVER_URL API_KEY S2S_MODEL AUDIO_FILE SCREENSHOT
// Chromium: $IZWI_CHROMIUM, else /usr/bin/chromium (Debian's `chromium`).
import puppeteer from 'puppeteer-core';

const [url, apiKey, model, audioFile, screenshot] = process.argv.slice(2);
const browser = await puppeteer.launch({
  executablePath: process.env.IZWI_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream',
         `--use-file-for-fake-audio-capture=${audioFile}%noloop`, '--autoplay-policy=no-user-gesture-required'],
});
const out = { page_errors: [] };
let page;
try {
  page = await browser.newPage();
  page.setDefaultTimeout(120000);
  await page.setViewport({ width: 1280, height: 900 });
  page.on('pageerror', (e) => out.page_errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') out.page_errors.push(m.text()); });
  await page.goto(`${url}/`);
  await page.type('#api-key', apiKey);
  await page.$eval('#api-key', (e) => e.dispatchEvent(new Event('change')));
  await page.waitForFunction((m) => [...document.querySelectorAll('#talk-model option')].some((o) => o.value === m),
                             {}, model);
  await page.select('#talk-model', model);
  await page.click('#talk-mic');
  // Done once an answer is playing with its transcript beside it (or the tab shows an error).
  await page.waitForFunction(() => {
    const answer = document.querySelector('#talk-log .assistant');
    return (answer && Number(answer.dataset.samples) > 0 && answer.textContent) ||
           document.getElementById('talk-status').classList.contains('error');
  });
  out.turns = await page.$$eval('#talk-log .user', (es) => es.map((e) => ({ text: e.textContent,
                                                                           committed: e.dataset.committed ?? null })));
  out.answer = await page.$eval('#talk-log .assistant', (e) => ({
    transcript: e.textContent, samples: Number(e.dataset.samples),
  }));
  out.status = await page.$eval('#talk-status', (e) => e.textContent);
  await page.screenshot({ path: screenshot, fullPage: true });
  await page.click('#talk-mic');
  out.stopped_status = await page.$eval('#talk-status', (e) => e.textContent);
} catch (e) {
  out.failure = e.message;
  // What the page showed when it failed.
  out.statuses = await page?.$$eval('.status', (es) => es.map((e) => `${e.id}: ${e.textContent}`)).catch(() => null);
  out.talk_log = await page?.$eval('#talk-log', (e) => e.innerHTML).catch(() => null);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
process.exit(out.failure ? 1 : 0);
