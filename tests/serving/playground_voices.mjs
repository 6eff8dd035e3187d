// Drives the playground page's Voices panel in headless Chromium: records a reference from the
// fake microphone (AUDIO_FILE), asks a model that clones no voices to make it (the server's 400
// shown in the panel), makes it with CLONING_MODEL, finds it listed and picked in the Speech panel,
// speaks in it (the WAV /v1/audio/speech answers), deletes it; then makes and deletes one from
// AUDIO_FILE uploaded; prints what the page showed and sent as one JSON line, and saves a
// screenshot of the page while it lists the first voice.
// Usage: node playground_voices.mjs SERVER_URL API_KEY CLONING_MODEL OTHER_SPEECH_MODEL AUDIO_FILE SCREENSHOT
// Chromium: $IZWI_CHROMIUM, else /usr/bin/chromium (Debian's `chromium`).
import puppeteer from 'puppeteer-core';

const [url, apiKey, cloningModel, otherModel, audioFile, screenshot] = process.argv.slice(2);
const browser = await puppeteer.launch({
  executablePath: process.env.IZWI_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream',
         `--use-file-for-fake-audio-capture=${audioFile}%noloop`],
});
const out = { page_errors: [] };
let page;
const text = (selector) => page.$eval(selector, (e) => e.textContent);
// The Voices panel's status once it starts with `outcome` or is an error (the panel shows each
// action in progress first, so an earlier outcome is never taken for this one).
const settledStatus = async (outcome) => {
  await page.waitForFunction((prefix) => {
    const status = document.getElementById('voices-status');
    return status.classList.contains('error') || status.textContent.startsWith(prefix);
  }, {}, outcome);
  return page.$eval('#voices-status', (e) => ({ text: e.textContent, error: e.classList.contains('error') }));
};
const listed = () => page.$$eval('#voices-list .voice', (es) => es.map((e) => ({
  id: e.dataset.id, text: e.querySelector('span').textContent,
})));
try {
  page = await browser.newPage();
  page.setDefaultTimeout(60000);
  await page.setViewport({ width: 1280, height: 900 });
  page.on('pageerror', (e) => out.page_errors.push(e.message));
  page.on('console', (m) => {
    // The 400 the test provokes is logged by Chromium as a failed resource; the page shows it.
    if (m.type() === 'error' && !m.text().includes('400 (Bad Request)')) out.page_errors.push(m.text());
  });
  await page.goto(`${url}/`);
  await page.type('#api-key', apiKey);
  await page.$eval('#api-key', (e) => e.dispatchEvent(new Event('change')));
  await page.waitForFunction((m) => [...document.querySelectorAll('#voices-model option')].some((o) => o.value === m),
                             {}, cloningModel);
  await page.waitForFunction(() => document.getElementById('voices-list').textContent);
  out.initial_list = await text('#voices-list');

  // Record about 1.5 s of the microphone.
  await page.click('#voices-record');
  await page.waitForFunction(() => document.getElementById('voices-status').textContent.startsWith('Recording'));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await page.click('#voices-record');
  out.recorded = await settledStatus('Recorded');
  out.recorded_seconds = Number(await page.$eval('#voices-reference', (e) => e.dataset.seconds));

  // A model that clones no voices: the server's 400, in the panel.
  await page.type('#voices-name', 'narrator');
  await page.select('#voices-model', otherModel);
  await page.click('#voices-create');
  out.wrong_model = await settledStatus('Created');

  // The cloning model: made, listed, picked by the Speech panel.
  await page.select('#voices-model', cloningModel);
  await page.click('#voices-create');
  out.created = await settledStatus('Created');
  out.listed = await listed();
  out.speech_model = await page.$eval('#speech-model', (e) => e.value);
  out.speech_voice = await page.$eval('#speech-voice', (e) => e.value);

  // Speech in it: the request the page sends, and the WAV its <audio> element was given.
  const answer = page.waitForResponse((r) => r.url().endsWith('/v1/audio/speech'));
  await page.click('#speech-speak');
  const response = await answer;
  await page.waitForFunction(() => {
    const status = document.getElementById('speech-status');
    return status.textContent === 'Done' || status.classList.contains('error');
  });
  out.speech_status = await text('#speech-status');
  await page.screenshot({ path: screenshot, fullPage: true });
  out.speech = {
    request: JSON.parse(response.request().postData()), status: response.status(),
    content_type: response.headers()['content-type'],
    ...await page.$eval('#speech-audio', async (e) => {
      const bytes = new Uint8Array(await (await fetch(e.src)).arrayBuffer());
      return { bytes: bytes.length, riff: String.fromCharCode(...bytes.subarray(0, 4)) };
    }),
  };

  // Deleted: gone from the list and from the Speech panel's voices.
  await page.click(`#voices-list .voice[data-id="${out.listed[0]?.id}"] button.delete`);
  out.deleted = await settledStatus('Deleted');
  out.listed_after = await listed();
  out.list_after = await text('#voices-list');
  out.speech_voices_after = await page.$$eval('#speech-voice option', (es) => es.map((e) => e.value));

  // An uploaded file as the reference instead: made and listed, then deleted too.
  await (await page.$('#voices-file')).uploadFile(audioFile);
  out.chosen = await settledStatus('Reference: ');
  await page.$eval('#voices-name', (e) => { e.value = 'uploaded'; });
  await page.click('#voices-create');
  out.uploaded = await settledStatus('Created');
  out.uploaded_listed = await listed();
  await page.click(`#voices-list .voice[data-id="${out.uploaded_listed[0]?.id}"] button.delete`);
  out.uploaded_deleted = await settledStatus('Deleted');
} catch (e) {
  out.failure = e.message;
  out.statuses = await page?.$$eval('.status', (es) => es.map((e) => `${e.id}: ${e.textContent}`)).catch(() => null);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
process.exit(out.failure ? 1 : 0);
