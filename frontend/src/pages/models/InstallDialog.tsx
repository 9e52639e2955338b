import { useId, useState } from "react";
import { useTranslation } from "react-i18next";

import { requestInstall, uploadModel, type InstallTarget, type ModelInstall, type ModelInstaller, type ModelKind } from "../../api/models";
import { formatBytes } from "../../lib/format";
import { Field } from "../../components/fields";
import { SubmitDialog, useSubmission } from "../../components/SubmitDialog";

type Source = "hub" | "zip" | "folder";

const FIELDS = ["reference", "file", "kind", "name", "revision"];

/** A well-known model of each kind, shown as the example id (it must be of the kind chosen). */
export const EXAMPLE_IDS: Record<ModelKind, string> = {
  embedding: "sentence-transformers/all-MiniLM-L6-v2",
  "cross-encoder": "cross-encoder/ms-marco-MiniLM-L-6-v2",
  llm: "",
};

interface InstallDialogProps {
  settings: ModelInstaller;
  /** The model to install, filled in (a link from an error that names a missing model). */
  initial?: InstallTarget | null;
  onStarted: (install: ModelInstall) => void;
  onClose: () => void;
}

/** The last part of a hub id, a file name without .zip, or a folder's name: the default model name. */
export function defaultModelName(reference: string): string {
  const last = reference.trim().replace(/\\/g, "/").replace(/\/+$/, "").split("/").pop() ?? "";
  return last.replace(/\.zip$/i, "").replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[-._]+|[-._]+$/g, "").slice(0, 100);
}

/** Install a model: from the Hugging Face Hub by id, from a .zip of its folder, or (administrators) from a folder on the server. */
export function InstallDialog({ settings, initial, onStarted, onClose }: InstallDialogProps) {
  const { t, i18n } = useTranslation();
  const [source, setSource] = useState<Source>(settings.offline ? "zip" : "hub");
  const [reference, setReference] = useState(initial && !settings.offline ? initial.reference : "");
  const [revision, setRevision] = useState("");
  const [file, setFile] = useState<File | null>(null);
  // No package ships a cross-encoder, so it is what a user most often comes to install.
  const [kind, setKind] = useState<ModelKind>(
    initial && settings.kinds.includes(initial.kind)
      ? initial.kind
      : settings.kinds.includes("cross-encoder") ? "cross-encoder" : (settings.kinds[0] ?? "embedding"),
  );
  const example = EXAMPLE_IDS[kind] || EXAMPLE_IDS["cross-encoder"];
  const [name, setName] = useState("");
  const [copy, setCopy] = useState(false);
  const submission = useSubmission(t("models.install.failed"));
  const { busy, uploaded, messagesAt } = submission;
  const ids = { source: useId(), reference: useId(), revision: useId(), file: useId(), kind: useId(), name: useId(), copy: useId() };

  const unplaced = submission.errors.filter((error) => !FIELDS.includes(error.path));
  const placeholder = defaultModelName(source === "zip" ? (file?.name ?? "") : reference);
  const ready = source === "zip" ? file !== null : reference.trim() !== "";

  const submit = () =>
    source === "zip"
      ? submission.upload<ModelInstall>((onProgress, signal) => uploadModel({ file: file!, kind, name: name.trim() }, onProgress, signal), onStarted)
      : submission.send(
          () => requestInstall({ source, reference: reference.trim(), kind, name: name.trim(), revision: revision.trim(), copy }),
          onStarted,
        );

  const choice = (value: Source, label: string, disabled = false) => (
    <label className="choice">
      <input type="radio" name={ids.source} value={value} checked={source === value} disabled={disabled}
        onChange={() => { setSource(value); submission.setErrors([]); }} />
      <span>{label}</span>
    </label>
  );

  return (
    <SubmitDialog
      title={t("models.install.title")}
      submitLabel={t("models.install.submit")}
      ready={ready}
      busy={busy}
      onSubmit={submit}
      onClose={onClose}
      uploaded={uploaded}
      uploadLabel={t("models.install.uploading", { name: file?.name ?? "" })}
      unplacedErrors={unplaced}
    >
      <fieldset className="choice-group">
        <legend className="field__label">{t("models.install.source")}</legend>
        {choice("hub", t("models.install.sourceHub"), settings.offline)}
        {choice("zip", t("models.install.sourceZip"))}
        {settings.can_install_folders && choice("folder", t("models.install.sourceFolder"))}
        {settings.offline && <p className="form-field__hint">{t("models.offline.detail")}</p>}
        <p className="form-field__hint" data-testid="install-access">
          {t(settings.installs_private ? "models.install.privateHint" : "models.install.sharedHint")}
        </p>
      </fieldset>

      {initial && settings.offline && (
        <p className="form-field__hint" data-testid="install-offline-target">
          {t("models.install.offlineTarget", { model: initial.reference })}
        </p>
      )}

      {source === "hub" && (
        <>
          <Field id={ids.reference} label={t("models.install.hubId")} hint={t("models.install.hubIdHint", { hub: settings.hub_endpoint })} errors={messagesAt("reference")}>
            {(describedBy, invalid) => (
              <input id={ids.reference} className="input" value={reference} placeholder={example}
                spellCheck={false} autoComplete="off" aria-describedby={describedBy} aria-invalid={invalid || undefined}
                onChange={(event) => setReference(event.target.value)} data-autofocus />
            )}
          </Field>
          <Field id={ids.revision} label={t("models.install.revision")} hint={t("models.install.revisionHint")} errors={messagesAt("revision")}>
            {(describedBy, invalid) => (
              <input id={ids.revision} className="input" value={revision} placeholder="main" spellCheck={false}
                aria-describedby={describedBy} aria-invalid={invalid || undefined} onChange={(event) => setRevision(event.target.value)} />
            )}
          </Field>
        </>
      )}

      {source === "zip" && (
        <Field id={ids.file} label={t("models.install.file")}
          hint={t("models.install.fileHint", { limit: formatBytes(settings.max_bytes, i18n.resolvedLanguage ?? "en") })} errors={messagesAt("file")}>
          {(describedBy, invalid) => (
            <input id={ids.file} type="file" className="input" accept=".zip,application/zip" data-testid="model-file"
              aria-describedby={describedBy} aria-invalid={invalid || undefined}
              onChange={(event) => setFile(event.target.files?.[0] ?? null)} />
          )}
        </Field>
      )}

      {source === "folder" && (
        <>
          <Field id={ids.reference} label={t("models.install.folder")} hint={t("models.install.folderHint")} errors={messagesAt("reference")}>
            {(describedBy, invalid) => (
              <input id={ids.reference} className="input" value={reference} placeholder={`/srv/models/${defaultModelName(example)}`}
                spellCheck={false} autoComplete="off" aria-describedby={describedBy} aria-invalid={invalid || undefined}
                onChange={(event) => setReference(event.target.value)} />
            )}
          </Field>
          <label className="choice">
            <input id={ids.copy} type="checkbox" checked={copy} onChange={(event) => setCopy(event.target.checked)} />
            <span>{t("models.install.copy")}</span>
          </label>
        </>
      )}

      <div className="form-row">
        <div className="field--grow">
          <Field id={ids.kind} label={t("models.install.kind")} errors={messagesAt("kind")}>
            {(describedBy, invalid) => (
              <select id={ids.kind} className="input" value={kind} aria-describedby={describedBy} aria-invalid={invalid || undefined}
                onChange={(event) => setKind(event.target.value as ModelKind)}>
                {settings.kinds.map((item) => (
                  <option key={item} value={item}>
                    {t(`models.kind.${item}`)}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <div className="field--grow">
          <Field id={ids.name} label={t("models.install.name")} hint={t("models.install.nameHint")} errors={messagesAt("name")}>
            {(describedBy, invalid) => (
              <input id={ids.name} className="input" value={name} placeholder={placeholder} maxLength={100} spellCheck={false}
                aria-describedby={describedBy} aria-invalid={invalid || undefined} onChange={(event) => setName(event.target.value)} />
            )}
          </Field>
        </div>
      </div>
    </SubmitDialog>
  );
}
