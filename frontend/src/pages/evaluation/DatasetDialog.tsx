import { useEffect, useId, useRef, useState } from "react";
import { useTranslation } from "react-i18next";

import { pathErrorsIn, pathErrorsOf, type PathError } from "../../api/components";
import {
  fetchSharedDatasets,
  importSharedDataset,
  uploadDataset,
  type EvaluationDataset,
} from "../../api/evaluation";
import { Modal } from "../../components/Modal";
import { ProgressBar } from "../../components/StatusViews";
import { useToast } from "../../components/Toasts";
import { useLoad } from "../../lib/useLoad";
import { Field, NumberField, UnplacedErrors } from "./fields";
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
  const toast = useToast();
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
  const [errors, setErrors] = useState<PathError[]>([]);
  const [busy, setBusy] = useState(false);
  const [uploaded, setUploaded] = useState<number | null>(null);
  const abort = useRef<AbortController | null>(null);
  const ids = { source: useId(), dataset: useId(), name: useId(), file: useId(), maxQueries: useId(), maxDocuments: useId(),
    chunked: useId(), chunkSize: useId(), chunkOverlap: useId() };

  const available = shared.state.status === "ready" ? shared.state.data : [];
  const noShared = shared.state.status === "ready" && available.length === 0;
  // Nothing to import by name on this server: start on the upload.
  useEffect(() => {
    if (noShared) setSource("upload");
  }, [noShared]);
  useEffect(() => () => abort.current?.abort(), []);

  const messagesAt = (field: string) => errors.filter((error) => error.path === field).map((error) => error.message);
  const chunkerMessages = errors.filter((error) => isChunkerPath(error.path)).map((error) => error.message);
  const unplaced = errors.filter((error) => !FIELDS.includes(error.path) && !isChunkerPath(error.path));
  const chunker = chunked
    ? { component: CHUNKER, params: { chunk_size: parseOptionalInt(chunkSize), chunk_overlap: parseOptionalInt(chunkOverlap) ?? 0 } }
    : null;
  const limits = { max_queries: parseOptionalInt(maxQueries), max_documents: parseOptionalInt(maxDocuments), chunker };
  const ready = source === "shared" ? dataset !== "" : name.trim() !== "" && file !== null;

  const fail = (list: PathError[] | null, error?: unknown) => {
    if (list) setErrors(list);
    else toast.error(t("evaluation.datasets.importFailed"), error);
    setBusy(false);
    setUploaded(null);
  };

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    if (!ready || busy) return;
    setBusy(true);
    setErrors([]);
    if (source === "shared") {
      try {
        onDone(await importSharedDataset({ dataset, name: name.trim(), ...limits }));
      } catch (error) {
        fail(pathErrorsOf(error), error);
      }
      return;
    }
    abort.current = new AbortController();
    setUploaded(0);
    try {
      const result = await uploadDataset({ name: name.trim(), file: file!, ...limits }, setUploaded, abort.current.signal);
      if (result.status === 201) onDone(result.body as EvaluationDataset);
      else fail(result.status === 400 ? pathErrorsIn(result.body) : null, new Error(t("errors.http", { status: result.status })));
    } catch (error) {
      fail(null, error);
    }
  };

  return (
    <Modal
      title={t("evaluation.datasets.addTitle")}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="button" onClick={onClose}>
            {t("common.cancel")}
          </button>
          <button type="submit" form="dataset-form" className="button button--primary" disabled={busy || !ready}>
            {t("evaluation.datasets.import")}
          </button>
        </>
      }
    >
      <form id="dataset-form" className="stack" onSubmit={submit} noValidate>
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

        {uploaded !== null && (
          <div className="upload-item__progress">
            <ProgressBar value={uploaded} label={t("evaluation.datasets.uploading", { name: file?.name ?? "" })} />
            <span className="upload-item__percent">{t("upload.percent", { percent: Math.round(uploaded * 100) })}</span>
          </div>
        )}
        <UnplacedErrors errors={unplaced} />
      </form>
    </Modal>
  );
}
