//! `readPrompt`: a prompt a framework hands over whole, read by the core's
//! rules ([`crate::working::prompt`]) for the framework adapters
//! (js/integrations), which only convert their messages.

use wasm_bindgen::prelude::*;

use super::{from_js_list, js_string, to_js};
use crate::working::prompt::read_prompt;

/// The turn of a prompt: its system text (`system`, the adapter's own,
/// then the prompt's system messages), the positions of its new messages
/// and the newest user message's text.
#[wasm_bindgen(js_name = readPrompt, unchecked_return_type = "PromptTurn")]
pub fn read_prompt_js(
    #[wasm_bindgen(unchecked_param_type = "MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] system: JsValue,
) -> Result<JsValue, JsValue> {
    let messages = from_js_list(&messages, "readPrompt takes an array of messages", "message")?;
    let system = super::memory::optional(system).map(|s| js_string(&s, "system")).transpose()?;
    to_js(&read_prompt(&messages, system.as_deref()))
}
