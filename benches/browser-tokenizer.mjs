// Runs benches/browser/tokenizer.html in headless Chromium; prints its result as JSON.
import { fileURLToPath } from "node:url";
import { startServer } from "../scripts/static-server.mjs";
import { launchChromium, runPage } from "../scripts/chromium.mjs";

const { server, url } = await startServer(fileURLToPath(new URL("..", import.meta.url)));
const browser = await launchChromium();
try {
  const result = await runPage(browser, `${url}benches/browser/tokenizer.html`, "__result");
  if (result.error) throw new Error(result.error);
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
  server.close();
}
