import { Trash2 } from "lucide-react";
import { useTranslation } from "react-i18next";

import type { RetrieverPreset } from "../../api/evaluation";
import type { InstalledModel } from "../../api/models";
import { useComponentName } from "../../catalog/CatalogProvider";
import { formatBytes } from "../../lib/format";

interface ModelListProps {
  models: readonly InstalledModel[];
  presets: ReadonlyMap<string, RetrieverPreset>;
  onRemove: (model: InstalledModel) => void;
}

/**
 * Models of one kind, each by its own name (a packaged model's as its authors publish it, with
 * the name pipelines use and the package that carries it as details): where each came from,
 * whose it is (a private model is marked), its size and licence, and what it lets run. The
 * server says which ones this user may remove.
 */
export function ModelList({ models, presets, onRemove }: ModelListProps) {
  const { t, i18n } = useTranslation();
  const componentName = useComponentName();
  const language = i18n.resolvedLanguage ?? "en";
  return (
    <ul className="model-list">
      {models.map((model) => (
        <li key={`${model.source}:${model.name}`} className="document" data-model-name={model.name}>
          <div className="document__body">
            <div className="document__head">
              <span className="document__name">{model.display_name || model.name}</span>
              <span className={`badge${model.source === "package" ? " badge--queued" : " badge--ready"}`}>
                {t(`models.sources.${model.source}`)}
              </span>
              {model.private && (
                <span
                  className="badge badge--queued"
                  data-private="true"
                  title={model.owner ? t("models.privateOf", { owner: model.owner }) : t("models.privateOwn")}
                >
                  {model.owner ? t("models.privateBadgeOf", { owner: model.owner }) : t("models.privateBadge")}
                </span>
              )}
            </div>
            {model.display_name && model.display_name !== model.name && (
              <span className="document__note model__id" title={t("models.pipelineNameTitle")}>
                {t("models.pipelineName")} <code>{model.name}</code>
                {model.upstream && ` · ${t("models.upstream", { id: model.upstream })}`}
              </span>
            )}
            <div className="card__meta">
              <span className="chip">{formatBytes(model.size, language)}</span>
              <span className="chip" title={t("models.licenseTitle")}>
                {model.license ?? t("models.licenseUnknown")}
              </span>
              {model.details.dimension !== undefined && (
                <span className="chip">{t("models.dimension", { count: model.details.dimension })}</span>
              )}
              {model.source_detail && (
                <span className="document__note model__source">
                  {t(`models.from.${model.source}`, { detail: model.source_detail })}
                  {model.revision && ` @ ${model.revision.slice(0, 12)}`}
                </span>
              )}
            </div>
            {(model.enables.components.length > 0 || model.enables.presets.length > 0) && (
              <div className="model__enables">
                <span>{t("models.enables")}</span>
                {[...new Set(model.enables.components.map(componentName))].map((label) => (
                  <span key={label} className="chip chip--info">
                    {label}
                  </span>
                ))}
                {model.enables.presets.map((name) => {
                  const preset = presets.get(name);
                  return (
                    <span
                      key={name}
                      className={`chip${preset?.available === false ? " chip--warning" : " chip--accent"}`}
                      data-preset={name}
                      title={preset?.available === false ? (preset.unavailable_reason ?? undefined) : t("models.presetReady")}
                    >
                      {t("models.preset", { name: preset?.display_name ?? name })}
                    </span>
                  );
                })}
              </div>
            )}
          </div>
          {model.removable && (
            <div className="document__actions">
              <button
                type="button"
                className="icon-button icon-button--danger"
                aria-label={t("models.removeNamed", { name: model.name })}
                title={t("models.remove")}
                onClick={() => onRemove(model)}
              >
                <Trash2 aria-hidden="true" size={16} />
              </button>
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}
