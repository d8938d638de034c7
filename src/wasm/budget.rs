//! `TokenBudget` for JS.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::types::{JsBudgetOptions, JsUsage, JsUsageReport};
use super::{from_js, js_count, js_error, to_js};
use crate::budget::{BudgetOptions, TokenBudget};

#[wasm_bindgen(js_name = TokenBudget)]
pub struct JsTokenBudget(TokenBudget);

#[wasm_bindgen(js_class = TokenBudget)]
impl JsTokenBudget {
    /// Throws `INVALID_INPUT` for negative, NaN or impossible splits.
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<JsBudgetOptions>) -> Result<JsTokenBudget, JsValue> {
        let options: BudgetOptions = match options {
            Some(o) if !o.is_undefined() && !o.is_null() => from_js(o.into(), "budget options", &[])?,
            _ => BudgetOptions::default(),
        };
        TokenBudget::new(options).map(JsTokenBudget).map_err(js_error)
    }

    #[wasm_bindgen(getter, js_name = availableForConversation)]
    pub fn available_for_conversation(&self) -> u32 {
        self.0.available_for_conversation()
    }

    #[wasm_bindgen(getter, js_name = compressionTrigger)]
    pub fn compression_trigger(&self) -> u32 {
        self.0.compression_trigger()
    }

    #[wasm_bindgen(js_name = needsCompression)]
    pub fn needs_compression(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] conversation_tokens: JsValue,
    ) -> Result<bool, JsValue> {
        Ok(self.0.needs_compression(js_count(&conversation_tokens, "conversationTokens")?))
    }

    #[wasm_bindgen(js_name = usageRatio)]
    pub fn usage_ratio(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] conversation_tokens: JsValue,
    ) -> Result<f64, JsValue> {
        Ok(self.0.usage_ratio(js_count(&conversation_tokens, "conversationTokens")?))
    }

    #[wasm_bindgen(js_name = recordUsage)]
    pub fn record_usage(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] input_tokens: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] output_tokens: JsValue,
    ) -> Result<(), JsValue> {
        let input = js_count(&input_tokens, "inputTokens")?;
        let output = js_count(&output_tokens, "outputTokens")?;
        self.0.record_usage(input, output);
        Ok(())
    }

    pub fn usage(&self) -> Result<JsUsage, JsValue> {
        Ok(to_js(&self.0.usage())?.unchecked_into())
    }

    /// The report as a structured object.
    pub fn report(&self) -> Result<JsUsageReport, JsValue> {
        Ok(to_js(&self.0.report())?.unchecked_into())
    }

    /// The report as one line of text.
    #[wasm_bindgen(js_name = usageReport)]
    pub fn usage_report(&self) -> String {
        self.0.usage_report()
    }
}
