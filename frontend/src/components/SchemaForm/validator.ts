import { TranslatableString, englishStringTranslator } from "@rjsf/utils";
import { customizeValidator } from "@rjsf/validator-ajv8";
import type { ErrorObject } from "ajv";
import Ajv2020 from "ajv/dist/2020";

import i18n from "../../i18n";

/** The wording of each ajv keyword, matching the server's messages so the two can merge. */
function messageOf(error: ErrorObject): string | null {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return i18n.t("validation.required");
    case "minimum":
      return i18n.t("validation.minimum", { limit: params.limit });
    case "exclusiveMinimum":
      return i18n.t("validation.exclusiveMinimum", { limit: params.limit });
    case "maximum":
      return i18n.t("validation.maximum", { limit: params.limit });
    case "exclusiveMaximum":
      return i18n.t("validation.exclusiveMaximum", { limit: params.limit });
    case "multipleOf":
      return i18n.t("validation.multipleOf", { multipleOf: params.multipleOf });
    case "minLength":
      return i18n.t("validation.minLength", { limit: params.limit });
    case "maxLength":
      return i18n.t("validation.maxLength", { limit: params.limit });
    case "minItems":
      return i18n.t("validation.minItems", { limit: params.limit });
    case "maxItems":
      return i18n.t("validation.maxItems", { limit: params.limit });
    case "pattern":
      return i18n.t("validation.pattern", { pattern: params.pattern });
    case "enum":
      return i18n.t("validation.enum", { allowed: (params.allowedValues as unknown[]).join(", ") });
    case "additionalProperties":
      return i18n.t("validation.additionalProperties", { name: params.additionalProperty });
    case "type":
      return i18n.t(`validation.type.${String(params.type).split(",")[0]}`, { defaultValue: error.message });
    default:
      return null;
  }
}

/** ajv's messages in the UI's language (ajv-i18n lacks zh-Hant, and these match the server's). */
function localizeErrors(errors?: ErrorObject[] | null): void {
  for (const error of errors ?? []) {
    error.message = messageOf(error) ?? error.message;
  }
}

/** The components' schemas are JSON Schema draft 2020-12. */
export const validator = customizeValidator(
  { AjvClass: Ajv2020 as unknown as NonNullable<Parameters<typeof customizeValidator>[0]>["AjvClass"] },
  localizeErrors,
);

/** rjsf's texts by their enum names, which make i18n keys (the English texts hold dots). */
const STRING_NAMES = new Map(Object.entries(TranslatableString).map(([name, text]) => [text, name]));

/** rjsf's own texts (array buttons and the like) through the i18n layer. */
export function translateString(text: TranslatableString, params?: string[]): string {
  const key = `rjsf.${STRING_NAMES.get(text)}`;
  return i18n.exists(key) ? i18n.t(key) : englishStringTranslator(text, params);
}
