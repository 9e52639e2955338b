import { useEffect, useId, useState } from "react";
import { useTranslation } from "react-i18next";

import {
  fetchSharedDatasets,
  importSharedDataset,
  uploadDataset,
  type EvaluationDataset,
} from "../../api/evaluation";
import { Field, NumberField } from "../../components/fields";
import { SubmitDialog, useSubmission } from "../../components/SubmitDialog";
import { useLoad } from "../../lib/useLoad";
import { parseOptionalInt } from "./format";

type Source = "shared" | "upload";

const FIELDS = ["dataset", "name", "file", "max_queries", "max_documents"];
const CHUNKER = "RecursiveCharacterChunker";
const isChunkerPath = (path: string) => path === "chunker" || path.startsWith("chunker.");

interface DatasetDialogProps {
  onDone: (dataset: EvaluationDataset) => void;
  onClose: () => void;
}

/** Add a dataset: one of the server's shared datasets by name, or a BEIR zip from this computer. */
export function DatasetDialog({ onDone, onClose }: DatasetDialogProps) {
  const { t } = useTranslation();
  const shared = useLoad(fetchSharedDatasets, []);
  const [source, setSource] = useState<Source>("shared");
  const [dataset, setDataset] = useState("");
  const [name, setName] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const [maxQueries, setMaxQueries] = useState("");
  const [maxDocuments, setMaxDocuments] = useState("");
  const [chunked, setChunked] = useState(false);
  const [chunkSize, setChunkSize] = useState("1000");
  const [chunkOverlap, setChunkOverlap] = useState("100");
  const submission = useSubmission(t("evaluation.datasets.importFailed"));
  const { busy, uploaded, messagesAt } = submission;
  const ids = { source: useId(), dataset: useId(), name: useId(), file: useId(), maxQueries: useId(), maxDocuments: useId(),
    chunked: useId(), chunkSize: useId(), chunkOverlap: useId() };

  const available = shared.state.status === "ready" ? shared.state.data : [];
  const noShared = shared.state.status === "ready" && available.length === 0;
  // Nothing to import by name on this server: start on the upload.
  useEffect(() => {
    if (noShared) setSource("upload");
  }, [noShared]);

  const chunkerMessages = submission.errors.filter((error) => isChunkerPath(error.path)).map((error) => error.message);
  const unplaced = submission.errors.filter((error) => !FIELDS.includes(error.path) && !isChunkerPath(error.path));
  const chunker = chunked
    ? { component: CHUNKER, params: { chunk_size: parseOptionalInt(chunkSize), chunk_overlap: parseOptionalInt(chunkOverlap) ?? 0 } }
    : null;
  const limits = { max_queries: parseOptionalInt(maxQueries), max_documents: parseOptionalInt(maxDocuments), chunker };
  const ready = source === "shared" ? dataset !== "" : name.trim() !== "" && file !== null;

  const submit = () =>
    source === "shared"
      ? submission.send(() => importSharedDataset({ dataset, name: name.trim(), ...limits }), onDone)
      : submission.upload<EvaluationDataset>(
          (onProgress, signal) => uploadDataset({ name: name.trim(), file: file!, ...limits }, onProgress, signal),
          onDone,
        );

  return (
    <SubmitDialog
      title={t("evaluation.datasets.addTitle")}
      submitLabel={t("evaluation.datasets.import")}
      ready={ready}
      busy={busy}
      onSubmit={submit}
      onClose={onClose}
      uploaded={uploaded}
      uploadLabel={t("evaluation.datasets.uploading", { name: file?.name ?? "" })}
      unplacedErrors={unplaced}
    >
      <fieldset className="choice-group">
        <legend className="field__label">{t("evaluation.datasets.source")}</legend>
        <label className="choice">
          <input type="radio" name={ids.source} value="shared" checked={source === "shared"} disabled={noShared} onChange={() => setSource("shared")} />
          <span>{t("evaluation.datasets.sourceShared")}</span>
        </label>
        <label className="choice">
          <input type="radio" name={ids.source} value="upload" checked={source === "upload"} onChange={() => setSource("upload")} />
          <span>{t("evaluation.datasets.sourceUpload")}</span>
        </label>
      </fieldset>

      {source === "shared" && (
        <Field id={ids.dataset} label={t("evaluation.datasets.shared")} errors={messagesAt("dataset")} hint={noShared ? t("evaluation.datasets.noShared") : undefined}>
          {(describedBy, invalid) => (
            <select
              id={ids.dataset}
              className="input"
              value={dataset}
              aria-describedby={describedBy}
              aria-invalid={invalid || undefined}
              disabled={shared.state.status !== "ready" || noShared}
              onChange={(event) => setDataset(event.target.value)}
            >
              <option value="">{shared.state.status === "loading" ? t("evaluation.datasets.loadingShared") : t("evaluation.datasets.choose")}</option>
              {available.map((item) => (
                <option key={item.name} value={item.name}>
                  {item.title && item.title !== item.name ? `${item.name} — ${item.title}` : item.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
      {shared.state.status === "error" && source === "shared" && <p className="form-error">{shared.state.message}</p>}

      <Field
        id={ids.name}
        label={source === "shared" ? t("evaluation.datasets.nameOptional") : t("evaluation.datasets.name")}
        hint={source === "shared" ? t("evaluation.datasets.nameHint") : undefined}
        errors={messagesAt("name")}
      >
        {(describedBy, invalid) => (
          <input
            id={ids.name}
            className="input"
            value={name}
            placeholder={source === "shared" ? dataset : ""}
            maxLength={200}
            aria-describedby={describedBy}
            aria-invalid={invalid || undefined}
            onChange={(event) => setName(event.target.value)}
          />
        )}
      </Field>

      {source === "upload" && (
        <Field id={ids.file} label={t("evaluation.datasets.file")} hint={t("evaluation.datasets.fileHint")} errors={messagesAt("file")}>
          {(describedBy, invalid) => (
            <input
              id={ids.file}
              type="file"
              className="input"
              accept=".zip,application/zip"
              data-testid="dataset-file"
              aria-describedby={describedBy}
              aria-invalid={invalid || undefined}
              onChange={(event) => {
                const chosen = event.target.files?.[0] ?? null;
                setFile(chosen);
                if (chosen && !name.trim()) setName(chosen.name.replace(/\.zip$/i, ""));
              }}
            />
          )}
        </Field>
      )}

      <div className="form-row">
        <NumberField id={ids.maxQueries} label={t("evaluation.datasets.maxQueries")} hint={t("evaluation.datasets.maxQueriesHint")}
          min={1} value={maxQueries} onChange={setMaxQueries} errors={messagesAt("max_queries")} />
        <NumberField id={ids.maxDocuments} label={t("evaluation.datasets.maxDocuments")} hint={t("evaluation.datasets.maxDocumentsHint")}
          min={1} value={maxDocuments} onChange={setMaxDocuments} errors={messagesAt("max_documents")} />
      </div>

      <fieldset className="choice-group">
        <legend className="field__label">{t("evaluation.datasets.chunking")}</legend>
        <label className="choice">
          <input id={ids.chunked} type="checkbox" checked={chunked} onChange={(event) => setChunked(event.target.checked)} />
          <span>{t("evaluation.datasets.chunked")}</span>
        </label>
        <p className="field__hint">{t("evaluation.datasets.chunkedHint")}</p>
        {chunked && (
          <div className="form-row">
            <NumberField id={ids.chunkSize} label={t("evaluation.datasets.chunkSize")} min={1} value={chunkSize} onChange={setChunkSize}
              errors={chunkerMessages} />
            <NumberField id={ids.chunkOverlap} label={t("evaluation.datasets.chunkOverlap")} min={0} value={chunkOverlap}
              onChange={setChunkOverlap} />
          </div>
        )}
      </fieldset>
    </SubmitDialog>
  );
}
