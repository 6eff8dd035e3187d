// Drives izwi-server's playground page (GET /) in headless Chromium and prints what the page shows
// as one JSON line: a streamed chat answer, the speech it loads into its <audio> element, the
// transcript of an uploaded file, and a live transcription of the microphone (Chromium's fake
// capture device playing AUDIO_FILE) over the realtime WebSocket. Saves a screenshot at the end.
// Usage: node playground_browser.mjs SERVER_URL API_KEY TEXT_MODEL TTS_MODEL ASR_MODEL AUDIO_FILE SCREENSHOT
// Chromium: $IZWI_CHROMIUM, else /usr/bin/chromium (Debian's `chromium`).
import puppeteer from 'puppeteer-core';

const [url, apiKey, textModel, ttsModel, asrModel, audioFile, screenshot] = process.argv.slice(2);
const timeout = 120000;

const browser = await puppeteer.launch({
  executablePath: process.env.IZWI_CHROMIUM || '/usr/bin/chromium',
  headless: true,  // --headless=new
  args: ['--no-sandbox', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream',
         `--use-file-for-fake-audio-capture=${audioFile}%noloop`],
});
const out = { page_errors: [] };
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(timeout);
  await page.setViewport({ width: 1280, height: 800 });
  page.on('pageerror', (e) => out.page_errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') out.page_errors.push(m.text()); });
  await page.goto(`${url}/`);
  out.title = await page.title();

  // The key, then the models it lists.
  await page.type('#api-key', apiKey);
  await page.$eval('#api-key', (e) => e.dispatchEvent(new Event('change')));
  await page.waitForFunction((m) => [...document.querySelectorAll('#chat-model option')].some((o) => o.value === m),
                             {}, textModel);
  await page.select('#chat-model', textModel);
  await page.select('#speech-model', ttsModel);
  await page.select('#transcription-model', asrModel);

  // Chat: greedy, 8 tokens; done when the answer carries its finish reason.
  await page.$eval('#chat-temperature', (e) => { e.value = '0'; });
  await page.$eval('#chat-max-tokens', (e) => { e.value = '8'; });
  await page.type('#chat-input', 'hello there');
  await page.click('#chat-send');
  await page.waitForSelector('#chat-log .assistant[data-finish-reason]');
  out.chat = await page.$eval('#chat-log .assistant', (e) => ({
    text: e.textContent, finish_reason: e.dataset.finishReason,
  }));
  out.chat_status = await page.$eval('#chat-status', (e) => e.textContent);

  // Speech: done when the <audio> element has read the WAV's header.
  await page.click('#speech-speak');
  await page.waitForFunction(() => {
    const status = document.getElementById('speech-status');
    return status.classList.contains('error') || document.getElementById('speech-audio').readyState >= 1;
  });
  out.speech = await page.$eval('#speech-audio', (e) => ({ duration: e.duration }));
  out.speech_status = await page.$eval('#speech-status', (e) => e.textContent);

  // Transcription of an uploaded file.
  const statusIsFinal = () => {
    const status = document.getElementById('transcription-status');
    return status.textContent === 'Done' || status.classList.contains('error');
  };
  await (await page.$('#transcription-file')).uploadFile(audioFile);
  await page.click('#transcription-upload');
  await page.waitForFunction(statusIsFinal);
  out.transcription = await page.$eval('#transcript', (e) => e.textContent);
  out.transcription_status = await page.$eval('#transcription-status', (e) => e.textContent);

  // The microphone, live over the WebSocket: listen a second, stop (commit), wait for the end.
  await page.click('#transcription-mic');
  await page.waitForFunction(() => {
    const status = document.getElementById('transcription-status');
    return status.textContent.startsWith('Listening') || status.classList.contains('error');
  });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await page.click('#transcription-mic');
  await page.waitForFunction(statusIsFinal);
  out.live = {
    transcript: await page.$eval('#transcript', (e) => e.textContent),
    status: await page.$eval('#transcription-status', (e) => e.textContent),
  };

  await page.screenshot({ path: screenshot, fullPage: true });
  out.screenshot = screenshot;
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
