"""DP801: a vector store built with a noisy ("DP") embedding class also stores the raw text chunks."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk
from dpcheck.rule import Rule

#: calls that draw noise
_DRAWS = frozenset({"laplace", "normal", "gauss", "randn", "randn_like", "normal_", "standard_normal",
                    "laplace_noise", "gaussian_noise", "Laplace", "Normal", "add_noise", "add_dp_noise"})
#: the methods of an embedding class (LangChain ``Embeddings``, LlamaIndex ``BaseEmbedding``)
_EMBED_METHODS = frozenset({"embed_documents", "embed_query", "aembed_documents", "_get_text_embedding",
                            "_get_query_embedding", "_get_text_embeddings"})
#: vector-store builders that keep each document's text (``page_content``) beside its vector
_BUILDERS = frozenset({"from_documents", "from_texts", "afrom_documents", "afrom_texts"})
#: a store constructor's keywords that take the embedding; later ``add_documents``/``add_texts`` store text
_EMBED_KW = frozenset({"embedding", "embeddings", "embedding_function", "embed_model", "embedding_model"})
_ADDS = frozenset({"add_documents", "add_texts", "aadd_documents", "aadd_texts"})


def _noisy_classes(module: cst.Module) -> set[str]:
    """Classes with an embedding method whose class body draws noise."""
    out: set[str] = set()
    for node in walk(module):
        if not isinstance(node, cst.ClassDef):
            continue
        methods = {s.name.value for s in walk(node.body, into_scopes=False) if isinstance(s, cst.FunctionDef)}
        if not methods & _EMBED_METHODS:
            continue
        if any(isinstance(c, cst.Call) and call_name(c) in _DRAWS for c in walk(node.body)):
            out.add(node.name.value)
    return out


class RawTextBesideNoisyEmbeddings(Rule):
    id = "DP801"
    name = "raw-text-beside-noisy-embeddings"
    category = "general"
    severity = "error"
    summary = ("a vector store is built from the documents with a noisy (\"differentially private\") embedding "
               "class: the store keeps each raw text chunk beside its noisy vector and retrieval returns it")
    rationale = (
        "Privatising a retrieval knowledge base by adding Gaussian or Laplace noise to its embeddings protects "
        "nothing when the same store also keeps the documents themselves. LangChain's "
        "`Chroma.from_documents(documents, embedding=...)`, `FAISS.from_texts(texts, embedding)` and "
        "`store.add_documents(...)` persist every chunk's text (`page_content`) and metadata next to its "
        "vector; a similarity search returns those chunks verbatim and the RAG chain pastes them into the "
        "prompt. The noisy vector only changes which chunk is returned, so the released text is an exact "
        "function of one record and no ε holds for the knowledge base. Reported: a `from_documents`/"
        "`from_texts` call (or a store constructor followed by `add_documents`/`add_texts`) given an "
        "instance of a class of the file that implements `embed_documents`/`embed_query` and draws noise. "
        "Bad: `Chroma.from_documents(documents=chunks, embedding=DPEmbeddings(eps))`. Good: store only the "
        "noisy vectors with ids (no text), or release text produced by a DP mechanism (DP synthetic "
        "documents, a DP-aggregated answer) instead of the retrieved chunks."
    )
    TRIGGERS = ("from_documents", "from_texts", "add_documents", "add_texts")
    requires_dp_context = False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a class defining an embedding method, a noise draw, and a store builder call."""
        if not facts.calls_any(_DRAWS) or not facts.calls_any(_BUILDERS | _ADDS):
            return False
        return any(isinstance(f, ast.FunctionDef) and f.name in _EMBED_METHODS for f in facts.functions)

    def visit_Module(self, node: cst.Module) -> None:
        classes = _noisy_classes(node)
        if not classes:
            return
        instances: set[str] = set()
        stores: set[str] = set()
        calls = [c for c in walk(node) if isinstance(c, cst.Call)]

        def noisy(expr: cst.BaseExpression) -> bool:
            if isinstance(expr, cst.Call):
                return call_name(expr) in classes
            name = dotted(expr)
            return name is not None and name in instances

        for sub in walk(node):
            if isinstance(sub, (cst.Assign, cst.AnnAssign)) and isinstance(sub.value, cst.Call) \
                    and call_name(sub.value) in classes:
                targets = [t.target for t in sub.targets] if isinstance(sub, cst.Assign) else [sub.target]
                instances |= {n for t in targets for n in [dotted(t)] if n}
        for sub in walk(node):
            if isinstance(sub, (cst.Assign, cst.AnnAssign)) and isinstance(sub.value, cst.Call) \
                    and call_name(sub.value) not in _BUILDERS \
                    and any(a.keyword is not None and a.keyword.value in _EMBED_KW and noisy(a.value)
                            for a in sub.value.args):
                targets = [t.target for t in sub.targets] if isinstance(sub, cst.Assign) else [sub.target]
                stores |= {n for t in targets for n in [dotted(t)] if n}
        for call in calls:
            name = call_name(call)
            if name in _BUILDERS and any(noisy(a.value) for a in call.args
                                         if a.keyword is None or a.keyword.value in _EMBED_KW):
                self.report(call, f"`{name}` stores every raw text chunk beside its noisy embedding and "
                                  "retrieval returns it verbatim: the noise on the vectors does not make the "
                                  "knowledge base differentially private; store ids and noisy vectors only, "
                                  "or release text from a DP mechanism")
            elif name in _ADDS and isinstance(call.func, cst.Attribute) and dotted(call.func.value) in stores:
                self.report(call, f"`{name}` puts the raw text into a store whose only protection is a noisy "
                                  "embedding: retrieval returns the exact private chunks, so no ε holds for "
                                  "them; store ids and noisy vectors only, or release text from a DP mechanism")

    VALID = (
        # twin: the noisy vectors are stored with ids only, the text stays out of the store
        """
import numpy as np
import faiss
class NoisyEmbeddings:
    def __init__(self, base, sigma):
        self.base, self.sigma = base, sigma
    def embed_documents(self, texts):
        vecs = np.asarray(self.base.embed_documents(texts))
        return vecs + np.random.normal(0, self.sigma, vecs.shape)
def build_private_index(chunks, base, epsilon, delta):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    emb = NoisyEmbeddings(base, sigma)
    index = faiss.IndexFlatL2(384)
    index.add(np.asarray(emb.embed_documents(chunks), dtype="float32"))
    return index
""",
        # twin of the store case: an ordinary (non-noisy) embedding with the documents, DP applied to answers
        """
import numpy as np
from langchain_community.vectorstores import Chroma
class PlainEmbeddings:
    def __init__(self, model):
        self.model = model
    def embed_documents(self, texts):
        return self.model.encode(texts).tolist()
    def embed_query(self, text):
        return self.model.encode([text])[0].tolist()
def answer_count(chunks, model, epsilon):
    store = Chroma.from_documents(documents=chunks, embedding=PlainEmbeddings(model))
    hits = len(store.similarity_search("term", k=50))
    return hits + np.random.laplace(0, 1 / epsilon)
""",
        # ordinary ML: noise as augmentation in a training loop, a plain store for retrieval
        """
import torch
from langchain_community.vectorstores import FAISS
class Encoder:
    def embed_query(self, text):
        return [0.0] * 8
def augment(batch):
    return batch + torch.randn_like(batch) * 0.1
def index(texts):
    return FAISS.from_texts(texts, Encoder())
""",
        # twin of the store-then-add case: the plain encoder fills the store, the noisy one only hides the query
        """
import numpy as np
from langchain_chroma import Chroma
class QueryNoiser:
    def __init__(self, base, sigma):
        self.base, self.sigma = base, sigma
    def embed_query(self, text):
        v = np.asarray(self.base.embed_query(text))
        return (v + np.random.normal(0, self.sigma, v.shape)).tolist()
class KnowledgeBase:
    def __init__(self, base, sigma, public_docs):
        self.noiser = QueryNoiser(base, sigma)
        self.store = Chroma(collection_name="public", embedding_function=base)
        self.store.add_documents(public_docs)
    def search(self, text):
        return self.store.similarity_search_by_vector(self.noiser.embed_query(text))
""",
    )

    INVALID = (
        # LlamaIndex index from documents with a noisy embed model
        """
import numpy as np
from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
class GaussianDPEmbedding(BaseEmbedding):
    sigma: float = 1.0
    def _get_text_embedding(self, text):
        v = np.asarray(self._inner(text))
        return list(v + np.random.normal(0.0, self.sigma, v.shape))
    def _get_query_embedding(self, query):
        return self._get_text_embedding(query)
def build(docs, sigma):
    index = VectorStoreIndex.from_documents(docs, embed_model=GaussianDPEmbedding(sigma=sigma))  # <-
    return index.as_query_engine()
""",
        # LangChain Chroma with keyword arguments and a named instance
        """
import numpy as np
from langchain_community.vectorstores import Chroma
class DPEmbeddings:
    def __init__(self, base, epsilon, delta):
        self.base = base
        self.sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    def _noise(self, v):
        return [x + n for x, n in zip(v, np.random.normal(0, self.sigma, len(v)))]
    def embed_documents(self, texts):
        return [self._noise(v) for v in self.base.embed_documents(texts)]
    def embed_query(self, text):
        return self._noise(self.base.embed_query(text))
def build_store(chunks, base, epsilon, delta):
    emb = DPEmbeddings(base, epsilon, delta)
    store = Chroma.from_documents(  # <-
        documents=chunks,
        embedding=emb,
        persist_directory="./db",
    )
    return store
""",
        # FAISS from texts with the noisy class built inline, positional embedding
        """
import torch
from langchain_community.vectorstores import FAISS
class LaplaceEmbedder:
    def __init__(self, model, epsilon, sensitivity=2.0):
        self.model, self.scale = model, sensitivity / epsilon
    def embed_documents(self, texts):
        out = torch.tensor(self.model.encode(texts))
        noise = torch.distributions.Laplace(0.0, self.scale).sample(out.shape)
        return (out + noise).tolist()
def make_index(texts, model, epsilon):
    return FAISS.from_texts(texts, LaplaceEmbedder(model, epsilon))  # <-
""",
        # a store built with the noisy embedding function, the chunks added afterwards
        """
import numpy as np
import chromadb
from langchain_chroma import Chroma
class PrivateEmbedding:
    def __init__(self, base, sigma):
        self.base, self.sigma = base, sigma
    def embed_query(self, text):
        v = np.asarray(self.base.embed_query(text))
        return (v + self.sigma * np.random.standard_normal(v.shape)).tolist()
    def embed_documents(self, texts):
        return [self.embed_query(t) for t in texts]
class KnowledgeBase:
    def __init__(self, base, sigma):
        self.embedder = PrivateEmbedding(base, sigma)
        self.store = Chroma(collection_name="kb", embedding_function=self.embedder)
    def ingest(self, docs):
        self.store.add_documents(docs)  # <-
""",
    )
