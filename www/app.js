import init, { Tokenizer, TokenBudget, loadTokenizer } from "./pkg/index.js";

await init();

const text = document.getElementById("text");
const rows = document.querySelector("#counts tbody");
const windowInput = document.getElementById("window");
const budgetOut = document.getElementById("budget");

const tokenizers = [{ name: "estimate", tok: Tokenizer.estimate(), status: "built in" }];
for (const name of ["cl100k", "o200k"]) {
  const entry = { name, tok: null, status: "loading pack…" };
  tokenizers.push(entry);
  const started = performance.now();
  loadTokenizer(name).then(
    (tok) => { entry.tok = tok; entry.status = `pack loaded in ${(performance.now() - started).toFixed(0)} ms`; render(); },
    (err) => { entry.status = `${err.code ?? "ERROR"}: ${err.message}`; render(); },
  );
}

function render() {
  rows.replaceChildren(...tokenizers.map(({ name, tok, status }) => {
    const tr = document.createElement("tr");
    for (const cell of [name, tok ? tok.count(text.value) : "…", status]) {
      const td = document.createElement("td");
      td.textContent = cell;
      tr.append(td);
    }
    return tr;
  }));
  try {
    const budget = new TokenBudget({ contextWindow: Number(windowInput.value) });
    const best = tokenizers.findLast((t) => t.tok);
    const used = best.tok.count(text.value);
    budgetOut.classList.remove("error");
    budgetOut.textContent = [
      `available for conversation: ${budget.availableForConversation}`,
      `compression at: ${budget.compressionTrigger} tokens`,
      `this text (${best.name}): ${used} tokens, ${(100 * budget.usageRatio(used)).toFixed(2)}% of the budget`,
      `needs compression: ${budget.needsCompression(used)}`,
    ].join("\n");
  } catch (err) {
    budgetOut.classList.add("error");
    budgetOut.textContent = `${err.code}: ${err.message}`;
  }
}

text.addEventListener("input", render);
windowInput.addEventListener("input", render);
render();
