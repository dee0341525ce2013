-- A PaperPing home as commit d484cf4a872fee8b67aad6ff0b2b7bb7616b9bce left it (written by tests/support/old_homes.py).

-- sql/0001_knowledge_base.sql at that commit
-- PaperPing's social knowledge base (Social-RAG step 1).
-- Everything learned from a channel carries team_id and channel_id. Paper metadata is public and shared.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE teams (
    team_id     text PRIMARY KEY,
    name        text,
    domain      text,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE channels (
    team_id     text NOT NULL REFERENCES teams ON DELETE CASCADE,
    channel_id  text NOT NULL,
    name        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, channel_id)
);

-- Profiles of the people who are members of a stored channel or appear in stored rows.
CREATE TABLE members (
    team_id       text NOT NULL REFERENCES teams ON DELETE CASCADE,
    user_id       text NOT NULL,
    display_name  text NOT NULL,
    real_name     text,
    is_bot        boolean NOT NULL DEFAULT false,
    deleted       boolean NOT NULL DEFAULT false,
    timezone      text,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, user_id)
);

CREATE TABLE channel_members (
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    user_id     text NOT NULL,
    PRIMARY KEY (team_id, channel_id, user_id),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);

-- Messages that share a paper link, and the replies in their threads.
CREATE TABLE messages (
    id           bigserial PRIMARY KEY,
    team_id      text NOT NULL,
    channel_id   text NOT NULL,
    ts           text NOT NULL,
    thread_ts    text,
    user_id      text,
    text         text NOT NULL,
    subtype      text,
    permalink    text,
    posted_at    timestamptz NOT NULL,
    edited_at    timestamptz,
    reply_count  integer NOT NULL DEFAULT 0,
    is_reply     boolean GENERATED ALWAYS AS (thread_ts IS NOT NULL AND thread_ts <> ts) STORED,
    UNIQUE (team_id, channel_id, ts),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
CREATE INDEX messages_thread ON messages (team_id, channel_id, thread_ts) WHERE thread_ts IS NOT NULL;
CREATE INDEX messages_channel_time ON messages (team_id, channel_id, posted_at);
CREATE INDEX messages_user ON messages (team_id, user_id);

CREATE TABLE reactions (
    message_id  bigint NOT NULL REFERENCES messages ON DELETE CASCADE,
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    user_id     text NOT NULL,
    emoji       text NOT NULL,
    -- When Slack does not say (exports), the time of the message reacted to.
    reacted_at  timestamptz NOT NULL,
    PRIMARY KEY (message_id, user_id, emoji)
);
CREATE INDEX reactions_channel ON reactions (team_id, channel_id);
CREATE INDEX reactions_user ON reactions (team_id, user_id);

-- A channel's own reading of an emoji; the default table lives in socialrag/emoji.py.
CREATE TABLE emoji_sentiments (
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    emoji       text NOT NULL,
    sentiment   text NOT NULL CHECK (sentiment IN ('positive', 'negative', 'neutral')),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, channel_id, emoji),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);

CREATE TABLE venues (
    id               bigserial PRIMARY KEY,
    name             text NOT NULL,
    normalized_name  text NOT NULL UNIQUE
);

CREATE TABLE papers (
    id                bigserial PRIMARY KEY,
    title             text,
    abstract          text,
    tldr              text,
    venue_id          bigint REFERENCES venues,
    year              integer,
    publication_date  date,
    url               text,
    popularity        double precision,
    citation_count    integer,
    in_catalog        boolean NOT NULL DEFAULT false,
    metadata_source   text,
    fetched_at        timestamptz,
    fetch_attempts    integer NOT NULL DEFAULT 0,
    next_fetch_at     timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX papers_to_fetch ON papers (next_fetch_at) WHERE fetched_at IS NULL;
CREATE INDEX papers_publication_date ON papers (publication_date);

-- Every identity a paper is known by (arxiv, doi, acl, s2, corpus, openreview, pmid, ...).
CREATE TABLE paper_ids (
    scheme    text NOT NULL,
    value     text NOT NULL,
    paper_id  bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    PRIMARY KEY (scheme, value)
);
CREATE INDEX paper_ids_paper ON paper_ids (paper_id);

-- Which message shares which paper, with the link as shown (its label is often the title).
CREATE TABLE message_papers (
    message_id  bigint NOT NULL REFERENCES messages ON DELETE CASCADE,
    paper_id    bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    url         text NOT NULL,
    label       text,
    PRIMARY KEY (message_id, paper_id)
);
CREATE INDEX message_papers_channel ON message_papers (team_id, channel_id, paper_id);
CREATE INDEX message_papers_paper ON message_papers (paper_id);

CREATE TABLE authors (
    id               bigserial PRIMARY KEY,
    name             text NOT NULL,
    normalized_name  text NOT NULL,
    s2_author_id     text UNIQUE,
    orcid            text
);
CREATE INDEX authors_normalized_name ON authors (normalized_name);

CREATE TABLE paper_authors (
    paper_id      bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    position      integer NOT NULL,
    author_id     bigint NOT NULL REFERENCES authors ON DELETE CASCADE,
    affiliations  text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (paper_id, position)
);
CREATE INDEX paper_authors_author ON paper_authors (author_id);

-- What a paper cites, by the identifiers the source gave; join through paper_ids to find stored papers.
CREATE TABLE paper_references (
    citing_paper_id  bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    cited_scheme     text NOT NULL,
    cited_value      text NOT NULL,
    contexts         text[],
    PRIMARY KEY (citing_paper_id, cited_scheme, cited_value)
);
CREATE INDEX paper_references_cited ON paper_references (cited_scheme, cited_value);

-- One vector per paper and model; content_hash says which text it was computed from.
CREATE TABLE paper_embeddings (
    paper_id      bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    model         text NOT NULL,
    content_hash  text NOT NULL,
    embedding     vector NOT NULL,
    embedded_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (paper_id, model)
);
CREATE INDEX paper_embeddings_hash ON paper_embeddings (model, content_hash);
-- The default model's index; socialrag.store creates the same kind of index for another model on first use.
CREATE INDEX paper_embeddings_hnsw_all_minilm_l6_v2 ON paper_embeddings
    USING hnsw ((embedding::vector(384)) vector_cosine_ops)
    WHERE model = 'all-MiniLM-L6-v2';

-- Where a history import (Web API backfill) stands, so a killed process resumes.
CREATE TABLE import_checkpoints (
    team_id       text NOT NULL,
    channel_id    text NOT NULL,
    source        text NOT NULL,
    cursor        text,
    state         jsonb NOT NULL DEFAULT '{}',
    started_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    completed_at  timestamptz,
    PRIMARY KEY (team_id, channel_id, source)
);

CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (1, 'knowledge_base', 'df057333a2f7d36358a5c40d13282577b2b7b1ff76117c65d6476bdbcfeb66b2', '2020-10-01T08:00:00Z');
-- the lab's data, written for this schema
INSERT INTO venues (id, name, normalized_name) VALUES (1, 'ACL', 'acl');
INSERT INTO papers (id, title, abstract, venue_id, year, publication_date, url, in_catalog, metadata_source, fetched_at, created_at) VALUES (1, 'Weight Poisoning Attacks on Pretrained Models', 'Recently, NLP has seen a surge in the usage of large pre-trained models. Users download weights of models pre-trained on large datasets, then fine-tune the weights on a task of their choice. This raises the question of whether downloading untrusted pre-trained weights can pose a security threat. In this paper, we show that it is possible to construct “weight poisoning” attacks where pre-trained weights are injected with vulnerabilities that expose “backdoors” after fine-tuning, enabling the attacker to manipulate the model prediction simply by injecting an arbitrary keyword. We show that by applying a regularization method which we call RIPPLe and an initialization procedure we call Embedding Surgery, such attacks are possible even with limited knowledge of the dataset and fine-tuning procedure. Our experiments on sentiment classification, toxicity detection, and spam detection show that this attack is widely applicable and poses a serious threat. Finally, we outline practical defenses against such attacks.', 1, 2020, '2020-07-05', 'https://aclanthology.org/2020.acl-main.249/', true, 'catalog', '2020-10-01T08:00:00Z', '2020-10-01T08:00:00Z');
INSERT INTO paper_ids (scheme, value, paper_id) VALUES ('acl', '2020.acl-main.249', 1);
INSERT INTO authors (id, name, normalized_name) VALUES (1, 'Keita Kurita', 'keita kurita');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (1, 0, 1);
INSERT INTO authors (id, name, normalized_name) VALUES (2, 'Paul Michel', 'paul michel');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (1, 1, 2);
INSERT INTO authors (id, name, normalized_name) VALUES (3, 'Graham Neubig', 'graham neubig');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (1, 2, 3);
INSERT INTO paper_embeddings (paper_id, model, content_hash, embedding, embedded_at) SELECT id, 'all-MiniLM-L6-v2', md5(title || E'\n' || COALESCE(abstract, '')), '[-0.117585,-0.0264666,0.0193172,0.0883983,0.05565,0.0200544,0.0569005,-0.0355943,0.000953065,-0.00813463,0.0167585,-0.0152017,0.100841,-0.0238635,-0.0480293,0.0191827,0.0618346,0.0844501,-0.116515,0.0111826,-0.0329195,0.0373505,-0.0766727,0.0166312,0.00458436,-0.078423,-0.0684795,-0.0016902,-0.0158168,-0.00801946,0.0266375,-0.049827,-0.0339023,0.068787,-0.0822715,0.0227114,-0.0128816,-0.0357398,-0.0278447,-0.0222669,-0.00296325,-0.0269186,-0.0524949,0.0897229,-0.0218777,-0.0203379,0.0329155,-0.0172906,-0.0151315,-0.0431003,-0.0519883,-0.0339536,0.00754012,0.0414049,-0.0344565,-0.0863198,0.0216468,0.0225559,-0.034431,0.0128358,-0.0469377,-0.0470807,-0.0238317,0.00113865,-0.0102893,0.000953099,-0.0166856,0.0591629,0.0532341,0.0860203,0.0541847,0.0614767,-0.053311,0.041277,0.0437536,0.0722136,-0.0407762,-0.0211628,0.0242746,-0.0811694,0.0215815,-0.0276788,0.0868829,-7.34029e-05,0.106081,0.0682033,0.00736965,-0.0288493,0.0866048,0.0289184,-0.0468306,-0.0155928,0.0757607,0.0690361,0.000590253,0.0548906,-0.0644267,-0.099845,-0.0366489,0.113408,-0.00715584,0.0388789,0.00197346,0.00450317,0.0733789,-0.00564558,0.0275357,0.0114761,0.0162228,-0.0160016,0.021651,0.067852,0.0241088,-0.0481209,0.0483133,-0.00454821,0.0516706,-0.00915741,-0.032411,0.0802774,-0.00398177,0.0291278,0.0115958,-0.0295933,-0.0179048,-0.0721867,-0.0707179,5.98058e-35,0.00672733,0.0481957,0.00634527,-0.0454445,-0.0425236,-0.0332216,-0.0174852,0.0796026,-0.0446548,-0.0211805,-0.0264263,0.019032,0.0145298,0.0992681,0.0739349,0.0405294,0.0152811,0.0537477,0.0545091,-0.0688098,0.0771808,-0.0895383,-0.00459553,-0.0572638,-0.033784,0.00522212,-0.00654805,-0.0196988,0.00513869,0.0433965,-0.14034,-0.0250169,0.0623462,0.0118603,-0.00963084,-0.0270794,0.00310141,0.0139035,-0.0041772,-0.0290016,0.0410431,0.0321904,-0.0174095,0.00913895,0.0177602,-0.0297573,-0.0983765,-0.0217652,-0.0195392,-0.0841157,0.0435599,-0.00861994,0.0183613,-0.00370327,-0.0769002,-0.0135718,-0.00299489,-0.0258342,0.0295602,0.0572243,-2.42783e-05,0.01494,-0.0137238,0.0218559,-0.0698852,-0.0928364,0.0393365,-0.0417095,-0.0205317,0.0105887,-0.0556345,-0.0430006,-0.0402697,0.0272784,-0.0238327,-0.0212483,0.0411872,-0.0167677,0.0740596,0.0219736,0.0569783,-0.0778816,0.0843948,-0.0133136,-0.0807515,-0.0667724,-0.00967222,-0.0957376,-0.00304054,0.0704208,-0.0569078,-0.00697675,-0.0253444,0.010757,-0.0699659,-7.36904e-34,-0.0870954,0.00511188,-0.122749,0.0625729,-0.0441309,-0.0422275,-0.0561998,0.0697136,-0.0339258,-0.00984433,-0.0165073,-0.0800117,0.0578612,-0.0320421,0.0695539,-0.0397153,-0.0217191,0.0496654,-0.0601063,0.0348018,0.0634279,0.0600765,-0.144673,0.103574,0.0373367,-0.0231464,-0.0199247,0.0892795,0.0159112,0.0656618,-0.0910637,0.0196717,0.00535373,-0.0449889,-0.0841748,0.0142044,0.0582912,0.03243,0.0249504,0.0604541,0.100388,0.0329727,-0.109656,-0.0282833,-0.0562439,-0.0556067,-0.0293189,0.000755915,0.0739705,-0.0318826,0.035716,-0.0233605,0.0398296,0.0361177,-0.0542176,-0.096451,0.0428234,-0.0391112,0.0438935,0.045319,-0.0759192,-0.0236381,0.0366547,-0.0388564,0.0248292,-0.0696938,-0.0169223,0.0328599,-0.00519529,-0.0437411,0.0339396,0.00993691,-0.0138686,0.0426935,-0.0437682,-0.0643463,0.0324383,-0.0391367,0.00223311,0.0329722,0.0597129,0.00486156,0.126041,0.0191704,0.0907882,0.0254385,0.0360079,0.0103177,-0.0186404,0.0273508,-0.00489481,-0.0177599,-0.0182652,0.063314,0.00170757,-3.71589e-08,-0.0339144,0.0133971,0.0477579,0.0830226,0.0103522,0.038897,-0.0458752,0.0902127,0.00124781,-0.0679911,0.0831969,0.0640062,-0.0251204,-0.0813731,-0.0613327,0.112667,-0.0468695,-0.00359379,-0.0393375,-0.0560735,-0.00630441,0.0874277,-0.00677422,-0.0397349,0.103482,-0.0710503,-0.0181548,0.0637612,0.0514148,0.0910795,-0.0618439,-0.0299161,-0.0342529,0.00816966,-0.0204899,0.170853,-0.0458075,-0.054497,-0.0314542,-0.0443366,0.0250878,0.0668997,-0.0144539,-0.0403449,0.0232572,-0.0248517,-0.00627808,-0.0521261,0.0859212,-0.0414884,0.0610992,-0.00966378,0.0173378,0.0904155,-0.0159601,0.0340435,-0.0175709,-0.0469256,-0.0200793,0.0867927,0.0554877,-0.0292627,0.068995,0.00446551]', '2020-10-01T08:05:00Z' FROM papers WHERE id = 1;
INSERT INTO papers (id, title, abstract, venue_id, year, publication_date, url, in_catalog, metadata_source, fetched_at, created_at) VALUES (2, 'Learning to Deceive with Attention-Based Explanations', 'Attention mechanisms are ubiquitous components in neural architectures applied to natural language processing. In addition to yielding gains in predictive accuracy, attention weights are often claimed to confer interpretability, purportedly useful both for providing insights to practitioners and for explaining why a model makes its decisions to stakeholders. We call the latter use of attention mechanisms into question by demonstrating a simple method for training models to produce deceptive attention masks. Our method diminishes the total weight assigned to designated impermissible tokens, even when the models can be shown to nevertheless rely on these features to drive predictions. Across multiple models and tasks, our approach manipulates attention weights while paying surprisingly little cost in accuracy. Through a human study, we show that our manipulated attention-based explanations deceive people into thinking that predictions from a model biased against gender minorities do not rely on the gender. Consequently, our results cast doubt on attention’s reliability as a tool for auditing algorithms in the context of fairness and accountability.', 1, 2020, '2020-07-05', 'https://aclanthology.org/2020.acl-main.432/', true, 'catalog', '2020-10-01T08:00:00Z', '2020-10-01T08:00:00Z');
INSERT INTO paper_ids (scheme, value, paper_id) VALUES ('acl', '2020.acl-main.432', 2);
INSERT INTO authors (id, name, normalized_name) VALUES (4, 'Danish Pruthi', 'danish pruthi');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (2, 0, 4);
INSERT INTO authors (id, name, normalized_name) VALUES (5, 'Mansi Gupta', 'mansi gupta');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (2, 1, 5);
INSERT INTO authors (id, name, normalized_name) VALUES (6, 'Bhuwan Dhingra', 'bhuwan dhingra');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (2, 2, 6);
INSERT INTO paper_embeddings (paper_id, model, content_hash, embedding, embedded_at) SELECT id, 'all-MiniLM-L6-v2', md5(title || E'\n' || COALESCE(abstract, '')), '[-0.0323194,-0.0241837,0.0130451,0.1008,0.115598,-0.0302772,0.0443948,-0.0369538,0.0314665,-0.00831461,-0.0880129,-0.109933,0.0198206,-0.00127464,-0.0598557,-0.0380266,0.062318,0.0724427,-0.0322867,-0.00545925,0.0725855,-0.0188406,0.0478555,-0.0211167,-0.0335868,-0.0747591,-0.0466303,-0.0565983,-0.0342923,0.0314493,0.0459611,-0.0739203,0.0468472,0.0673897,-0.115025,0.0291475,-0.0441307,-0.0414311,0.0140776,-0.0611996,-0.0762839,-0.020955,-0.0185475,0.0429546,0.0838213,-0.00380163,0.0669547,-0.00476038,-0.070091,-0.0558911,-0.0628205,-0.0726095,0.0308477,-0.00948295,-0.126812,-0.0560936,0.00594203,0.0889335,-0.0221518,-0.0146417,-0.067394,-0.0508369,-0.0362003,0.0112861,-0.0309865,0.0477322,-0.0428673,0.0201156,-0.0390825,0.0224002,0.094586,0.088542,-0.00990773,-0.0133337,0.0395909,0.121252,0.042971,0.035487,0.0381437,-0.0768074,-0.0428005,-0.0229455,0.0526032,0.0141405,0.129198,-0.0254695,-0.00168899,0.0384986,-0.0155877,0.0444386,-0.0896872,-0.0688865,0.082811,0.00381471,0.0981234,0.0606045,-0.0522026,-0.0318942,-0.061044,0.0481701,-0.0676299,0.0685944,0.00269092,-0.0860635,0.0146966,-0.0363343,0.0463908,-0.0211145,0.0240387,-0.0599942,0.0214117,0.0726948,-0.0181555,0.0109375,0.103572,-0.0432591,0.0351893,0.0285554,0.0037397,0.0452471,0.0143761,0.0444696,0.00830842,0.00711655,0.0696344,-0.0370386,-0.0474481,1.55816e-33,-0.00183679,0.0564763,0.0324991,0.00724191,0.0392828,-0.0207584,-0.0379204,0.0256375,0.0216642,0.0417127,-0.0033975,0.0509574,-0.0656833,0.0133914,0.0008592,0.085553,-0.0219648,0.0676513,-0.0629779,-0.0291308,0.0193135,-0.0133638,-0.00905392,-0.0782033,-0.0409193,-0.0353765,0.00595043,-0.0361332,-0.0199339,0.0229055,-0.0768802,-0.0250687,0.0705259,0.015182,-0.0357152,-0.0432812,-0.0213141,0.00609892,0.0661695,0.0428678,0.0177307,-0.0146225,0.0371082,0.0353555,-0.0121716,0.0165032,-0.0133343,0.00461458,-0.0345974,0.0203292,0.036714,0.0879603,0.00582109,-0.00518884,0.000289839,0.0310343,0.0630789,0.0262577,-0.0254048,-0.0281987,0.0924179,0.0293159,-4.40297e-05,0.0272552,-0.0953936,0.0129835,-0.0376786,0.0336606,0.00927332,0.042574,-0.0546375,0.0305192,-0.0843064,0.0682965,-0.0264322,0.0666736,0.0808672,-0.0364609,0.0794163,-0.0267946,0.0706531,-0.0537535,0.00175204,0.00655453,-0.0914758,-0.0553868,0.0165079,-0.033766,0.00627761,0.0148762,-0.0020365,-0.0551375,-0.00356611,-0.00427669,-0.0760947,-2.93082e-33,-0.104618,-0.0235256,-0.0392217,-0.0150199,-0.0838933,-0.0535698,-0.034427,-0.0194366,0.0261171,0.018133,-0.0633621,-0.121916,0.0786924,0.0259169,0.017272,-0.119956,0.0178182,0.0237382,-0.00503988,-0.0141028,0.0624169,0.148004,-0.0272232,0.0213314,-0.0216637,0.0269476,0.0482365,0.0363893,0.0386352,-0.032258,-0.162698,-0.00936559,-0.00293762,-0.0381105,-0.0423755,-0.0138947,0.00590196,0.0250262,0.00198637,0.045036,0.0155643,-0.0430976,-0.117464,0.00379623,-0.0688133,-0.0319943,0.0436132,0.00398669,0.007152,-0.00616139,-0.0341276,-0.0491424,-0.064722,0.0258923,-0.097528,-0.0320713,0.00392879,-0.0175859,0.123715,0.0162151,-0.106832,0.0484902,-0.00344445,0.0167632,-0.0375988,-0.0766038,0.0112768,-0.0221998,0.107111,-0.0111612,0.113134,-0.0886195,0.00193663,0.0612464,-0.00911446,0.0554237,0.0094261,-0.0575764,-0.0372643,-0.0488495,0.0862199,-0.00503961,0.119762,-0.0109965,0.0506115,0.0332897,0.0641476,0.0174328,-0.0378338,0.0472816,-0.013522,0.00121406,-0.0202183,0.0894169,-0.0767839,-4.06848e-08,-0.0161464,0.092289,-0.0106872,0.0489533,0.00552163,-0.0840077,-0.0696207,0.00876955,-0.0455637,-0.0482009,0.0412824,0.0112136,-0.0151987,-0.0746635,0.0268013,0.0744183,0.0212261,0.0412752,-0.0196904,-0.0523577,0.0652068,0.00297882,0.0200759,-0.0291586,0.0670501,-0.0539371,-0.113623,0.0962786,-0.0108642,0.047306,0.00937739,0.0327266,-0.0360002,0.0031893,0.0121636,0.082974,0.0267184,-0.0198415,0.0330893,-0.0372922,0.04492,0.0267829,0.0376547,0.0431304,0.00898717,-0.00668041,-0.0163538,-0.0158449,0.0458129,-0.0214066,0.0160733,-0.0493155,-0.00993127,0.0483239,-0.00149752,-0.0344758,-0.0155233,-0.0143698,-0.0625703,0.024659,0.0946404,0.058196,0.00950233,-0.0470615]', '2020-10-01T08:05:00Z' FROM papers WHERE id = 2;
INSERT INTO papers (id, title, abstract, venue_id, year, publication_date, url, in_catalog, metadata_source, fetched_at, created_at) VALUES (3, 'TaBERT: Pretraining for Joint Understanding of Textual and Tabular Data', 'Recent years have witnessed the burgeoning of pretrained language models (LMs) for text-based natural language (NL) understanding tasks. Such models are typically trained on free-form NL text, hence may not be suitable for tasks like semantic parsing over structured data, which require reasoning over both free-form NL questions and structured tabular data (e.g., database tables). In this paper we present TaBERT, a pretrained LM that jointly learns representations for NL sentences and (semi-)structured tables. TaBERT is trained on a large corpus of 26 million tables and their English contexts. In experiments, neural semantic parsers using TaBERT as feature representation layers achieve new best results on the challenging weakly-supervised semantic parsing benchmark WikiTableQuestions, while performing competitively on the text-to-SQL dataset Spider.', 1, 2020, '2020-07-05', 'https://aclanthology.org/2020.acl-main.745/', true, 'catalog', '2020-10-01T08:00:00Z', '2020-10-01T08:00:00Z');
INSERT INTO paper_ids (scheme, value, paper_id) VALUES ('acl', '2020.acl-main.745', 3);
INSERT INTO authors (id, name, normalized_name) VALUES (7, 'Pengcheng Yin', 'pengcheng yin');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (3, 0, 7);
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (3, 1, 3);
INSERT INTO authors (id, name, normalized_name) VALUES (8, 'Wen-tau Yih', 'wen-tau yih');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (3, 2, 8);
INSERT INTO paper_embeddings (paper_id, model, content_hash, embedding, embedded_at) SELECT id, 'all-MiniLM-L6-v2', md5(title || E'\n' || COALESCE(abstract, '')), '[0.0344389,-0.110576,0.0687906,0.0553709,0.0298002,0.00814835,0.00787654,0.00308785,-0.102506,-0.0269851,-0.0236579,-0.0462892,0.0142303,0.0350901,-0.0180393,0.0505218,0.0726528,0.0124209,-0.0682603,0.0596073,-0.0341838,0.0139452,0.0477586,0.0202967,0.0596831,0.0470058,2.57992e-05,-0.0316418,0.0440199,-0.00772108,0.0306918,-0.0264622,-0.0960467,0.140945,-0.0321365,0.0444835,-0.0704897,-0.0465941,0.0183909,-0.0392751,-0.00751766,-0.0510535,-0.0318989,0.00662318,0.100972,0.000649338,-0.00450038,-0.0462223,-0.0125607,0.0629325,-0.0753048,0.0705318,0.00362158,0.0616487,-0.0337127,0.0420553,-0.0261839,0.00477457,-0.0103734,-0.0019885,-0.0907086,-0.0877092,-0.000506485,-0.0130455,-0.0517325,-0.0608592,-0.0556724,0.0761591,0.0118318,0.00505996,-0.0160936,0.0974027,0.0031648,0.0915632,-0.0263018,0.042024,-0.0115872,-0.00241811,0.00660925,-0.082438,0.00702711,0.0673038,0.0708556,0.0362697,0.125363,0.0337179,0.0439764,0.0570899,-0.0177743,0.00672915,-0.00316733,-0.0547407,0.0949882,0.014934,-0.00629756,0.0875353,0.024066,-0.0706153,-0.0500261,0.0931239,0.0438656,0.100919,0.0185269,-0.00488952,-0.0717273,0.000477926,0.011658,-0.0153087,0.0204318,-0.0893792,0.0914683,0.0457756,0.00983092,-0.0239081,0.00871388,-0.0345037,-0.0531308,-0.0662896,0.0871218,0.00311648,-0.0542957,0.0402875,-0.0574426,0.0336895,-0.0406047,-0.088975,-0.0264016,1.35666e-33,0.0404538,0.0323207,0.0392,-0.0399113,0.0455088,0.021095,-0.0113898,0.109912,-0.0684182,0.0549354,-0.0297613,-0.0359086,-0.0475261,0.00397333,-0.0220732,0.037093,-0.112704,0.0117817,-0.0244665,-0.00221398,-0.053866,0.00545391,-0.0217094,0.0577606,0.0517932,0.00133222,0.0393892,-0.0407273,-0.0319252,0.0252174,-0.0651174,-0.0686759,0.00662591,0.00396458,0.00193081,-0.10272,-0.00298174,-0.00550441,-0.0453529,-0.00325255,-0.000192783,0.0368686,0.00051077,-0.00324312,-0.0525294,-0.105053,0.00404415,0.0264171,0.0119424,-0.0262609,0.0539842,-0.0368141,-0.0624052,-0.00347718,0.063037,0.0149153,-0.015274,0.0529441,0.0575337,0.0680539,-0.0166062,0.00093754,0.0111348,0.0497378,-0.0570759,0.051094,-0.0217449,0.068925,0.0499972,-0.0844688,-0.061365,0.00590349,-0.00126068,-0.0460199,0.0978619,0.0506046,0.0237804,-0.123033,0.0360339,0.042811,0.0410874,0.0112491,-0.0362185,-0.0327693,-0.0629074,-0.0339889,0.0750213,-0.117569,0.0339423,0.0248164,0.0256031,-0.0359046,-0.0580826,-0.0523956,0.00123932,-1.30978e-34,0.00502111,-0.040758,-0.105753,0.0341746,-0.00998201,-0.0395948,-0.000907373,0.0560454,0.0423505,0.00778589,-0.0297032,-0.06953,0.0340875,-0.00296237,0.0489886,0.0376318,-0.027252,-0.000513637,-0.00715873,0.100023,0.0154589,0.105444,-0.0219096,0.081435,-0.0299922,0.0541469,-0.00642008,0.0638147,-0.0108036,0.0270858,-0.0106363,-0.0362867,0.0286341,-0.07218,-0.102475,0.0400466,0.00992159,-0.0519709,-0.0406908,-0.0263163,0.0556828,-0.00149434,-0.0315563,0.0261444,-0.0601998,0.023009,-0.0330298,-0.0359485,-0.0431811,0.0514857,-0.0142432,-0.0495665,-0.0664819,-0.0163059,-0.0414919,-0.083003,-0.0608888,-0.00277442,-0.0412964,-0.021568,-0.0132209,0.0479674,0.0854363,0.00938569,0.0667309,-0.0733705,-0.0466406,-0.00470588,0.00720409,0.00549465,0.0111342,-0.0274169,-0.000312199,0.0251492,0.0554813,0.0279419,-0.00157724,-0.0606976,-0.0651801,-0.0682669,0.0509787,-0.00407849,0.042673,0.0226431,0.08807,0.0445943,0.0294677,0.0775035,0.00181795,0.0920081,0.0254233,0.00289136,-0.0551411,0.0620665,-0.0176534,-3.11313e-08,-0.151781,0.0645242,-0.0534205,0.076733,0.0542934,-0.0942547,0.0262235,0.151492,-0.0724185,-0.0657806,0.0641335,0.0756611,-0.0483144,-0.0713401,0.0131556,0.110128,0.0403215,-0.0331946,-0.0213158,0.0117063,0.121072,0.0743538,0.0182085,0.0422147,0.00513417,-0.0436345,-0.0702959,0.100936,0.0322854,-0.035159,0.00041412,-0.00640666,-0.0140668,-0.0564484,0.0510405,0.074944,0.0464009,-0.0358912,-0.0170431,-0.0745417,0.0152472,0.0474781,-0.0934788,0.00337424,-0.00909202,-0.00389001,-0.0928322,-0.0363291,0.0600179,-0.0673673,-0.00835625,-0.0354075,-0.0273608,0.0213945,0.00277768,0.0127918,-0.0248784,0.0142358,0.0077137,-0.0107376,-0.013543,0.0467944,0.0539921,0.0473506]', '2020-10-01T08:05:00Z' FROM papers WHERE id = 3;
INSERT INTO papers (id, title, abstract, venue_id, year, publication_date, url, in_catalog, metadata_source, fetched_at, created_at) VALUES (4, 'Learning to Understand Child-directed and Adult-directed Speech', 'Speech directed to children differs from adult-directed speech in linguistic aspects such as repetition, word choice, and sentence length, as well as in aspects of the speech signal itself, such as prosodic and phonemic variation. Human language acquisition research indicates that child-directed speech helps language learners. This study explores the effect of child-directed speech when learning to extract semantic information from speech directly. We compare the task performance of models trained on adult-directed speech (ADS) and child-directed speech (CDS). We find indications that CDS helps in the initial stages of learning, but eventually, models trained on ADS reach comparable task performance, and generalize better. The results suggest that this is at least partially due to linguistic rather than acoustic properties of the two registers, as we see the same pattern when looking at models trained on acoustically comparable synthetic speech.', 1, 2020, '2020-07-05', 'https://aclanthology.org/2020.acl-main.1/', true, 'catalog', '2020-10-01T08:00:00Z', '2020-10-01T08:00:00Z');
INSERT INTO paper_ids (scheme, value, paper_id) VALUES ('acl', '2020.acl-main.1', 4);
INSERT INTO authors (id, name, normalized_name) VALUES (9, 'Lieke Gelderloos', 'lieke gelderloos');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (4, 0, 9);
INSERT INTO authors (id, name, normalized_name) VALUES (10, 'Grzegorz Chrupała', 'grzegorz chrupała');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (4, 1, 10);
INSERT INTO authors (id, name, normalized_name) VALUES (11, 'Afra Alishahi', 'afra alishahi');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (4, 2, 11);
INSERT INTO paper_embeddings (paper_id, model, content_hash, embedding, embedded_at) SELECT id, 'all-MiniLM-L6-v2', md5(title || E'\n' || COALESCE(abstract, '')), '[0.0219044,-0.0900978,0.04956,0.0282922,0.0174528,0.00777234,0.0592169,-0.0327658,0.0569986,-0.0426642,-0.0137675,0.00338617,-0.0350095,0.0283849,0.0958598,-0.0160036,0.0732195,0.0449355,0.0379987,-0.0668553,0.0981514,0.0973569,0.0604483,-0.0121864,0.0404611,0.0537639,-0.0890432,0.00544588,0.0591523,0.0553981,0.0472604,-0.0273142,0.0734747,0.0170259,-0.0811703,0.00859362,-0.0325982,0.0620088,-0.0413334,-0.0273053,-0.0359646,0.00985126,-0.0504274,-0.0750272,0.0357489,-0.106887,-0.0563591,-0.00850743,-0.00588568,0.0228907,-0.149786,-0.0267244,0.0422307,0.105398,-0.0594356,0.0605748,0.0348282,0.0567472,0.028406,0.0116063,-0.0874417,-0.0891963,-0.102893,-0.038151,-0.0212761,-0.0342104,-0.00526156,0.0278422,0.0209821,0.0204318,-0.0339869,0.0977529,0.0478758,0.0753683,0.0182245,0.0269995,0.0323616,-0.0589974,0.0650835,-0.112234,-0.011516,-0.00486121,0.0150899,-0.0183533,0.0167368,0.0146334,0.0222549,0.00596155,-0.0274157,-0.0358928,-0.0467169,-0.0693839,-0.0273734,0.0474987,0.00874462,0.00870759,-0.0437655,-0.0514701,-0.00613402,0.0149287,0.0869533,-0.00672424,-0.0429435,-0.037692,-0.0618227,-0.0085297,-0.0230614,0.0456262,-0.000195733,0.00311285,-0.0321353,0.0672672,0.0093878,0.0142179,-0.0338524,-0.0162335,-0.0827605,-0.0577901,0.0371665,0.05028,0.00906075,0.0569232,-0.0348155,0.0717833,0.0245869,-0.130116,0.00469125,-1.43076e-33,0.0520705,0.0586725,0.058728,0.050877,0.0200972,0.0193382,0.0439521,-0.0141897,0.0123323,0.0223063,-0.0230005,-0.0687398,-0.0389988,0.0697415,0.0120455,0.0917291,-0.100871,0.0765283,-0.00345635,0.0524341,0.0462595,0.0800216,0.0364494,-0.0296298,0.104458,-0.0296378,0.0308957,-0.0165254,-0.0331797,0.0177707,-0.101886,-0.0389197,-0.0114949,0.010877,-0.00225241,-0.0589421,0.0768174,-0.0141809,-0.0408333,-0.0620349,-0.0206989,-0.0251907,0.0663509,0.0264752,-0.0541499,0.0171098,-0.0866215,-0.0211332,-0.0483044,0.00894226,0.0154597,0.0418099,-0.0608743,-0.0196389,0.0207785,0.0818022,-0.00457149,0.0441598,-0.0138162,0.00804854,0.0293437,0.00474773,0.0142262,0.0390018,-0.0074517,0.0268441,-0.0403855,0.0396647,0.0571591,-0.0364628,-0.0512513,-0.0373525,-0.0150694,0.0206144,0.0426047,0.00439207,0.079587,-0.0762471,0.0489374,0.0543589,-0.0426696,-0.0414339,0.0408161,-0.0658968,-0.0498644,-0.0781886,-0.0333882,-0.0978759,0.0822794,-0.0305997,-0.0461069,-0.0285592,-0.0759201,0.0672934,-0.00837751,-2.67533e-33,-0.0839869,0.0708503,-0.00817017,0.00644089,-0.0893882,-0.0152613,0.0805312,0.0513185,-0.0327508,-0.0871034,-0.045902,-0.021841,0.04393,0.0197821,0.0178372,-0.0124562,0.0182026,0.0536903,0.0905242,0.0579538,0.0419933,0.0863492,-0.0673107,0.0305463,-0.0262904,-0.0791647,-0.0899522,0.0903995,-0.0274625,0.0483677,0.00815572,0.00412951,-0.00592291,0.00947794,-0.00853296,0.0360632,-0.0617234,0.000760931,0.00731321,0.0882805,-0.0098898,-0.0466785,0.0291897,-0.00663663,-0.0187354,-0.0327837,-0.00916305,-0.0278111,-0.00954938,0.015477,0.04117,-0.0195837,-0.0297006,-0.054157,-0.11158,-0.0661354,0.0671297,-0.0867762,0.0393128,-0.0228182,-0.024455,-0.013077,-0.0125244,-0.0588414,-0.0541453,-0.00741916,-0.0191012,-0.032185,0.0706253,-0.043511,0.0353328,0.00783873,-0.00492407,0.0127592,-0.0337514,-0.0016116,-0.0759466,-0.00269128,-0.118726,-0.0117639,0.0214201,0.0295064,0.0062295,-0.0266614,0.0251669,0.127671,-0.033833,-0.0576313,-0.0260295,0.0352432,-0.0303826,0.00985992,0.0291314,-0.0156822,-0.0733757,-3.89093e-08,-0.0324773,0.0665324,0.102222,0.0150367,0.00616271,-0.0728939,-0.064512,0.0390428,-0.0124426,-0.0756511,-0.0120987,0.0455513,0.0238252,-0.0190225,-0.000425215,-0.00991628,0.0629567,0.00623817,0.0118324,-0.080629,0.142561,0.075232,-0.00241356,0.099178,-0.00953423,-0.0683796,0.0616282,0.0847565,0.00727334,-0.0092979,-0.00274561,0.0565264,-0.0592506,0.00290834,0.0342219,0.0443686,-0.0488955,-0.0667299,-0.0168058,0.0160284,0.0169648,0.0273755,-0.00581086,0.00926818,0.111579,0.0275899,-0.0685587,-0.113211,0.0223283,-0.0298201,-0.016185,-0.0184519,-0.0830373,-0.0528221,0.139515,0.0205762,-0.0664555,0.0274761,-0.0233508,0.0563109,0.0127917,0.0934055,-0.0331745,-0.0707455]', '2020-10-01T08:05:00Z' FROM papers WHERE id = 4;
INSERT INTO papers (id, title, abstract, venue_id, year, publication_date, url, in_catalog, metadata_source, fetched_at, created_at) VALUES (5, 'Predicting Depression in Screening Interviews from Latent Categorization of Interview Prompts', 'Accurately diagnosing depression is difficult– requiring time-intensive interviews, assessments, and analysis. Hence, automated methods that can assess linguistic patterns in these interviews could help psychiatric professionals make faster, more informed decisions about diagnosis. We propose JLPC, a model that analyzes interview transcripts to identify depression while jointly categorizing interview prompts into latent categories. This latent categorization allows the model to define high-level conversational contexts that influence patterns of language in depressed individuals. We show that the proposed model not only outperforms competitive baselines, but that its latent prompt categories provide psycholinguistic insights about depression.', 1, 2020, '2020-07-05', 'https://aclanthology.org/2020.acl-main.2/', true, 'catalog', '2020-10-01T08:00:00Z', '2020-10-01T08:00:00Z');
INSERT INTO paper_ids (scheme, value, paper_id) VALUES ('acl', '2020.acl-main.2', 5);
INSERT INTO authors (id, name, normalized_name) VALUES (12, 'Alex Rinaldi', 'alex rinaldi');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (5, 0, 12);
INSERT INTO authors (id, name, normalized_name) VALUES (13, 'Jean Fox Tree', 'jean fox tree');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (5, 1, 13);
INSERT INTO authors (id, name, normalized_name) VALUES (14, 'Snigdha Chaturvedi', 'snigdha chaturvedi');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (5, 2, 14);
INSERT INTO paper_embeddings (paper_id, model, content_hash, embedding, embedded_at) SELECT id, 'all-MiniLM-L6-v2', md5(title || E'\n' || COALESCE(abstract, '')), '[-0.0180431,0.0137939,-0.00465032,0.0885949,0.0462264,0.070793,0.060875,-0.00780336,0.0491596,-0.123527,-0.120002,-0.060065,-0.0858848,0.0111249,0.0713935,-0.02103,-0.00058392,0.0280127,-0.00905191,-0.015398,-0.0206814,0.0900003,0.0669514,0.022485,0.0376317,0.0462379,0.0447954,-0.0235758,0.0144402,0.0887479,-0.0269899,0.0664719,0.0722385,0.0718576,-0.0288224,-0.00689737,-0.0664605,0.0575099,0.0117718,0.0194656,-0.0789243,0.0027589,0.0134621,0.0338465,-0.0610361,-0.127647,-0.0575213,0.0105421,-0.0210096,-0.0121797,-0.0668678,0.00478032,0.0483805,0.0189944,-0.0681026,0.00523841,0.0469721,0.0700448,-0.00324393,0.0986404,-0.0298273,-0.143669,-0.0275357,0.0558813,0.0791203,0.0444136,-0.048812,-0.00508068,-0.0549605,0.0366286,-0.10764,-0.000270055,-0.00678899,0.088367,0.0113924,0.0506225,0.0421023,-0.00107735,0.0590471,0.0227596,-0.0159841,0.0487707,0.00460474,-0.0202703,0.0783513,-0.00548705,0.0028809,0.015257,-0.0718045,0.0145615,-0.0114646,-0.102606,-0.0280644,-0.00686168,-0.0207701,0.0390485,-0.00966388,-0.0325352,0.0360391,0.0439019,0.012264,0.0102515,-0.0206371,0.000602365,-0.0795864,-0.0687109,-0.020933,-0.012092,0.0138481,-0.054939,-0.106197,-0.0232303,0.0361967,-0.0339975,0.0341676,-0.0326683,0.0151078,0.0129894,0.0674443,0.0134301,0.0318288,0.0320833,0.0356321,-0.0326557,0.0575128,0.0978769,-0.118902,4.56474e-34,0.156598,-0.0432748,0.037661,0.0794126,-0.0181951,0.00914247,-0.0782784,-0.00255509,0.0553594,0.0248596,-0.010542,0.00632538,-0.0490122,0.0053739,-0.0814803,0.0144717,-0.0886907,0.0529309,-0.0543064,0.0548186,0.00331512,-0.00242565,0.0667452,-0.0203444,0.00534129,0.00844094,0.0557703,-0.0828929,-0.0440931,0.0329472,-0.107123,0.0196025,0.091424,-0.0233915,0.0483535,0.0192247,0.0266634,-0.00691116,0.0474812,-0.0430812,-0.0325162,-0.0608515,0.0340316,-0.00652118,-0.02555,-0.0572099,-0.0456204,-0.0717447,-0.0524425,0.0856215,0.00879478,0.0366349,-0.0267219,0.0104244,-0.00720044,-0.0173173,0.005733,-0.0612291,-0.00147515,0.0260342,0.00814769,0.0653792,-0.0255512,-0.0781898,0.0355306,-0.0306104,-0.0398709,0.0257075,0.0279882,0.0411634,-0.0205772,0.0793554,0.00560397,-0.0286017,0.0425134,0.00920128,-0.00516684,-0.0181695,-0.0137477,-0.00974348,0.0110464,-0.102244,-0.0280683,-0.00499745,-0.0622699,-0.0195092,0.00911477,-0.0570914,-0.0305749,-0.014259,-0.0599042,0.0569188,0.0636288,0.00509631,0.0487129,-3.27508e-33,0.0242233,-0.00713142,-0.0329486,-0.0475059,0.00439923,-0.0281075,0.0295707,-0.0121105,0.015636,0.0612718,0.0342958,-0.0254797,0.0839313,0.0220368,0.0120381,0.0107244,0.00342405,0.0256069,0.0337543,-0.0199648,0.0634723,0.0873416,-0.0266109,-0.00237239,-0.0238839,-0.110675,0.0254655,0.0231135,-0.0321193,-0.0811527,-0.0300454,-0.017663,-0.0292041,-0.00448543,-0.0429729,0.0255286,-0.0126606,-0.107426,-0.0927158,0.0300818,0.0541947,-0.0482759,-0.106364,-0.0262817,-0.0330884,-0.0843307,-0.0371678,0.0163845,0.0762964,0.0486433,-0.0883933,0.00103807,-0.0321949,0.0724133,-0.0178906,-0.0738007,-0.0639627,-0.116602,-0.0305242,0.057665,-0.0753312,0.0626929,0.114297,-0.0723359,0.0358923,-0.186523,0.0442539,0.0463869,0.0127224,-0.00410839,0.061143,0.0121154,0.00787759,0.0481808,0.0359971,-0.0583292,-0.0378573,-0.0430198,-0.0420036,-0.0409523,0.0532377,-0.0489756,0.0264574,0.0550001,0.0487289,0.0747064,0.0130603,0.158586,0.0758277,0.0201289,-0.011032,0.00776215,-0.0235614,-0.019876,-0.0655695,-3.59891e-08,-0.058064,-0.0411834,-0.0570267,0.0015777,0.00301556,-0.0348802,-0.009855,0.0667214,-0.0499236,-0.0279133,0.0175128,0.0508716,-0.0656614,-0.0362141,-0.043089,-0.00432652,0.0211588,0.0976933,0.0567141,-0.0462999,0.0466017,-0.0236082,0.0523007,0.0485839,-0.0315005,-0.00656387,-0.00539204,0.0103132,-0.027411,-0.0105289,-0.0176662,0.0980079,-0.0423337,-0.031921,-0.0073304,0.0546797,0.00140374,-0.0841838,-0.00481733,0.0641174,-0.0270041,-0.00675217,-0.0569079,-0.00869565,-0.00455467,0.0100263,0.00622819,-0.0613997,0.000102506,-0.0609607,-0.0161299,0.0123743,0.00936247,0.0527532,0.135703,0.0495897,-0.0252832,0.0502664,-0.0239842,-0.0368167,0.0671191,0.108513,0.0156829,-0.0170402]', '2020-10-01T08:05:00Z' FROM papers WHERE id = 5;
INSERT INTO papers (id, title, abstract, venue_id, year, publication_date, url, in_catalog, metadata_source, fetched_at, created_at) VALUES (6, 'Coach: A Coarse-to-Fine Approach for Cross-domain Slot Filling', 'As an essential task in task-oriented dialog systems, slot filling requires extensive training data in a certain domain. However, such data are not always available. Hence, cross-domain slot filling has naturally arisen to cope with this data scarcity problem. In this paper, we propose a Coarse-to-fine approach (Coach) for cross-domain slot filling. Our model first learns the general pattern of slot entities by detecting whether the tokens are slot entities or not. It then predicts the specific types for the slot entities. In addition, we propose a template regularization approach to improve the adaptation robustness by regularizing the representation of utterances based on utterance templates. Experimental results show that our model significantly outperforms state-of-the-art approaches in slot filling. Furthermore, our model can also be applied to the cross-domain named entity recognition task, and it achieves better adaptation performance than other existing baselines. The code is available at https://github.com/zliucr/coach.', 1, 2020, '2020-07-05', 'https://aclanthology.org/2020.acl-main.3/', true, 'catalog', '2020-10-01T08:00:00Z', '2020-10-01T08:00:00Z');
INSERT INTO paper_ids (scheme, value, paper_id) VALUES ('acl', '2020.acl-main.3', 6);
INSERT INTO authors (id, name, normalized_name) VALUES (15, 'Zihan Liu', 'zihan liu');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (6, 0, 15);
INSERT INTO authors (id, name, normalized_name) VALUES (16, 'Genta Indra Winata', 'genta indra winata');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (6, 1, 16);
INSERT INTO authors (id, name, normalized_name) VALUES (17, 'Peng Xu', 'peng xu');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (6, 2, 17);
INSERT INTO paper_embeddings (paper_id, model, content_hash, embedding, embedded_at) SELECT id, 'all-MiniLM-L6-v2', md5(title || E'\n' || COALESCE(abstract, '')), '[-0.0629146,-0.0854379,0.0664645,-0.00251442,0.00115855,0.0411041,0.0444259,-0.0182091,-0.00726599,-0.0766504,-0.130672,-0.0707045,0.0220943,0.00976399,0.0348768,-0.0562116,0.0991568,0.0230054,-0.0368082,0.00749354,0.0384202,0.0718639,0.0435296,0.00894613,-0.0218531,0.0140889,-0.0433762,-0.0448181,0.0320746,-0.00754998,-0.0297306,0.0318213,0.025522,0.0831373,-0.0250712,0.0343209,-0.073849,0.0613464,-0.0332891,-0.045959,-0.0310371,-0.000468374,0.0162587,-0.00437737,0.026139,0.00153694,-0.0820846,-0.0915464,0.0175314,0.0698382,-0.0339944,-0.0646356,0.0776829,0.100408,-0.0850188,0.0799573,0.0555847,0.0899719,-0.00475358,0.0418786,-0.050466,-0.0830382,-0.00533479,-0.0559657,-0.062234,-0.0406642,-0.0667871,0.0738761,-0.0262876,0.0808143,-0.0832073,0.101643,-0.0601648,0.00748523,-0.00860529,0.067307,-0.0457906,-0.0359949,0.0507209,-0.0693069,0.00135669,0.00768038,0.0287728,-0.00563016,0.161078,0.00208751,-0.0284593,0.0135603,-0.0426637,0.0179293,-0.0594513,-0.0635033,0.15686,-0.0102812,-0.021557,0.103505,0.0120776,-0.0784065,-0.00827869,0.0664179,-0.0223638,0.10699,0.00531972,-0.0487513,0.00150846,0.0373892,0.00963033,0.0496959,-0.00550075,0.0105863,0.0587464,0.0830671,0.0396269,-0.0542377,0.0260559,-0.0631159,-0.0122826,-0.0732821,-0.0262974,0.0860737,-0.0305538,0.0337504,-0.0596783,0.0280177,0.0139815,-0.0284049,0.0653932,4.20943e-34,0.10577,0.104082,0.0277979,0.0428382,-0.0403362,-0.0182609,-0.00556603,0.0131736,-0.0433989,-0.0165885,0.00430029,-0.0434732,-0.0262382,0.0214294,0.0451989,-0.00939651,-0.046432,0.0701972,0.0318481,-0.0512569,-0.023512,0.0621819,0.00970776,-0.0100007,0.165167,0.00714228,0.0452537,-0.102181,-0.0224038,0.0117097,-0.0658187,-0.0997965,0.00415225,0.0204468,0.0548717,-0.0108061,0.0238727,-0.0386457,-0.0601309,-0.0113759,-0.0464085,-0.016738,0.0393076,0.0337327,-0.0514978,-0.0429025,-0.027237,-0.0242376,0.0183981,-0.0256064,0.0121605,0.0363914,-0.022724,-0.0287533,-0.0174022,-0.100393,0.0523282,0.0355334,0.0564435,-0.00175951,0.0679633,-0.000400113,-0.0088481,0.114085,0.0288419,-0.000810036,-0.0125689,-0.00779149,0.0374254,-0.00541914,-0.0457808,0.00465528,-0.00517899,0.031252,0.0137869,0.0459446,0.0152025,-0.124481,0.0317568,0.050558,0.0677773,-0.0407626,-0.0165961,-0.0827163,-0.0140969,-0.0750309,0.0665985,-0.0850121,0.00424422,0.00578828,0.0134073,-0.0139235,-0.0574408,0.039962,-0.0182667,2.64962e-34,0.0246338,0.0324016,0.000870951,0.0383343,-0.0277466,-0.0211876,0.012614,0.0648764,-0.0377657,-0.0492601,-0.0839677,-0.0221536,0.080393,-0.0464193,-0.00336168,0.036759,-0.0682814,0.0648709,-0.0458675,0.062198,0.0447552,0.0335331,-0.0184117,0.0697015,-0.0250873,0.00690479,-0.0336576,0.0557513,0.0109619,-0.0438959,-0.0420701,-0.0116141,-0.044106,-0.0403524,-0.0657676,0.0416116,-0.0294597,0.0147907,-0.0453417,0.0372173,0.0554903,-0.0857027,-0.0781493,-0.0479938,-0.0771039,-0.0372607,-0.102075,0.0263842,0.0187482,-0.0297442,-0.103873,-0.0113063,-0.0274255,0.068751,0.00468942,-0.0589467,-0.0361814,-0.0641886,0.00502218,0.00222467,-0.055062,0.024049,0.108441,-0.0431141,0.127604,-0.0199714,-0.0203688,-0.0553792,0.00619504,-0.0823637,0.0633806,-0.00942423,0.0478266,0.0204356,-0.0199001,0.0307505,0.0416003,-0.0897563,-0.0729997,-0.0012892,-0.000682029,0.0177154,0.0709095,0.0685586,0.0496611,0.123033,0.0673419,0.0714113,-0.0141574,0.00620558,-0.0425434,0.033935,0.0276591,0.0206718,-0.0251413,-4.1596e-08,-0.0928074,0.0278487,-0.0253538,0.0618321,0.0214635,-0.0884009,-0.0510827,0.0262283,0.00375598,0.0172329,0.0204001,-0.0251831,0.0105301,-0.0374794,0.0112748,0.0667491,-0.0204546,0.085792,-0.00739798,-0.00719431,0.0994938,0.094732,0.0240841,-0.0167616,-0.00852725,-0.0524099,-0.0332601,0.0774787,0.0266221,-0.0325477,-0.0335411,0.00769835,0.00850722,0.0160181,0.0177771,0.0452103,0.0682252,-0.0192376,-0.0545305,-0.0512035,0.0423758,0.011428,-0.0947849,0.0126564,0.0573746,0.0359771,0.00400592,-0.0718436,0.0494201,-0.0642241,0.00962311,-0.0140234,0.0387655,-0.0223488,0.0520524,0.0274697,0.0110251,-0.00147215,0.0422293,0.0732601,-0.0377697,0.0256479,0.0344662,0.0233863]', '2020-10-01T08:05:00Z' FROM papers WHERE id = 6;
INSERT INTO papers (id, title, abstract, venue_id, year, publication_date, url, in_catalog, metadata_source, fetched_at, created_at) VALUES (7, 'Designing Precise and Robust Dialogue Response Evaluators', 'Automatic dialogue response evaluator has been proposed as an alternative to automated metrics and human evaluation. However, existing automatic evaluators achieve only moderate correlation with human judgement and they are not robust. In this work, we propose to build a reference-free evaluator and exploit the power of semi-supervised training and pretrained (masked) language models. Experimental results demonstrate that the proposed evaluator achieves a strong correlation (> 0.6) with human judgement and generalizes robustly to diverse responses and corpora. We open-source the code and data in https://github.com/ZHAOTING/dialog-processing.', 1, 2020, '2020-07-05', 'https://aclanthology.org/2020.acl-main.4/', true, 'catalog', '2020-10-01T08:00:00Z', '2020-10-01T08:00:00Z');
INSERT INTO paper_ids (scheme, value, paper_id) VALUES ('acl', '2020.acl-main.4', 7);
INSERT INTO authors (id, name, normalized_name) VALUES (18, 'Tianyu Zhao', 'tianyu zhao');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (7, 0, 18);
INSERT INTO authors (id, name, normalized_name) VALUES (19, 'Divesh Lala', 'divesh lala');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (7, 1, 19);
INSERT INTO authors (id, name, normalized_name) VALUES (20, 'Tatsuya Kawahara', 'tatsuya kawahara');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (7, 2, 20);
INSERT INTO paper_embeddings (paper_id, model, content_hash, embedding, embedded_at) SELECT id, 'all-MiniLM-L6-v2', md5(title || E'\n' || COALESCE(abstract, '')), '[-0.0724888,-0.0556198,0.00278362,0.0335813,0.0597067,0.0130285,0.0468458,-0.0328505,-0.0205254,-0.0633759,-0.111242,-0.124275,-0.00684966,0.0216187,-0.0296134,-0.0302127,0.0754429,-0.00946942,-0.0383064,-0.0426275,0.0515125,0.0923771,0.0131714,0.0179482,0.0552675,-0.0831451,-0.0425532,-0.0217591,0.0226056,-0.00708113,-0.00221427,-0.00255302,0.0535189,0.035553,-0.0697795,0.0602567,-0.00666019,0.0623369,-0.0140607,-0.0156424,-0.110132,0.0337128,0.0123037,-0.0168242,0.0401767,-0.056888,-0.0817545,-0.111129,-0.0123313,0.0585657,-0.0626511,0.0872016,0.0707057,0.0409743,-0.0612771,0.0490453,0.0201397,0.012608,0.0486072,-0.0431813,-0.0570141,-0.154811,-0.0817691,0.0390773,-0.0160328,0.00805416,-0.0221135,-0.0129009,-0.0569873,0.0248284,-0.0603424,0.0452635,-0.017218,0.0640581,-0.00764974,0.0674336,-0.0706879,-0.0624778,0.067725,-0.0186585,0.0385141,0.00697311,0.0908897,0.0146289,0.0635413,0.0239876,0.0124116,0.0769631,-0.0185645,0.0643971,0.000913111,-0.0190235,0.078074,0.00433569,0.00916436,0.0150605,-0.0166397,-0.10093,0.00792445,0.0608992,-0.0175328,0.082483,0.010476,-0.126599,-0.0187318,0.0382069,0.0540976,-0.00518764,0.0374772,-0.0283051,-0.0104201,0.0158845,0.0155984,-0.0203694,0.107384,-0.0123196,0.0335035,-0.0569102,0.00274896,0.0074391,0.00238993,0.00606074,0.0107974,0.031253,0.0817641,-0.00671749,0.0198517,8.04085e-34,0.077225,0.0111615,0.025917,0.0448156,-0.0162251,-0.0260957,-0.0458452,0.0204366,-0.0789827,-0.00325517,0.00457164,-0.0261571,-0.0141416,0.0433203,-0.0197548,0.0636056,-0.0655361,0.0811069,-0.0226083,-0.0550151,-0.0124616,0.051187,0.00318541,-0.00501613,0.0688465,-0.0463785,0.100646,-0.028063,-0.0265657,0.0116715,-0.0862548,-0.0119293,0.0454117,0.0260491,0.0399797,-0.0338235,-0.0349205,0.0682644,-0.00399527,-0.00290683,-0.0137978,-0.0250123,0.0485438,0.0196091,-0.0506577,-0.00337347,-0.051079,0.0286411,-0.0121548,0.00502163,-0.00347076,0.0559308,-0.0153659,0.012979,-0.00914624,-0.011684,0.00371387,0.0567453,-0.00965328,-0.002879,0.0295523,0.0717156,-0.00786081,-0.012298,0.0475665,0.0114148,-0.00654378,-0.0130812,0.0454166,0.0222102,-0.0284493,-0.0525768,-0.0117145,-0.0125469,0.0423722,0.0352617,-0.00110957,-0.0243628,0.105878,0.0226298,0.0220043,-0.0547804,0.0494128,-0.0891825,-0.0179946,-0.103626,0.0246221,-0.0335336,-0.031957,0.0479081,0.0200598,-0.0439585,-0.0626011,0.0430602,0.0144648,-7.68798e-34,0.0431291,0.0514309,-0.0166942,0.104664,-0.0746233,0.0726081,0.0560019,0.119211,0.0210689,-0.00415365,-0.00764357,-0.0195363,0.0856384,-0.0151947,0.0821837,0.0252813,-0.00518102,0.00186844,-0.0142649,0.057913,0.0590514,0.0942647,-0.0271872,0.0280206,-0.0653956,-0.0258305,-0.0099276,0.0223064,0.0161417,0.00041246,-0.0771124,0.0276127,-0.0583333,0.0136585,-0.0638674,-0.000518323,0.0783123,-0.0498531,0.00385936,0.0464878,0.0487063,-0.0289219,-0.119218,-0.0442789,-0.023794,-0.120318,-0.0535702,-0.0248054,-0.0560374,-0.0274719,-0.0778292,0.00354686,-0.048839,-0.0123797,-0.0606038,-0.157029,0.0312425,-0.0843705,0.037171,0.0451111,-0.0681275,0.0052964,0.0657924,0.0134456,0.0480215,-0.0451093,-0.044716,-0.000510423,-0.00857658,-0.0171176,0.147162,-0.0404173,0.0257373,0.0337542,0.0259381,-0.00983628,0.0465643,-0.0502924,-0.0625257,-0.0469332,0.068348,0.0429721,0.0825551,0.0358332,0.0342027,0.0611208,0.0216776,0.0455478,-0.0303752,0.0743408,-0.0311969,0.00211216,0.0235649,0.0548817,-0.0186387,-3.71007e-08,-0.0907219,0.0279343,0.0569444,0.0943763,-0.0611336,-0.0484358,-0.00495027,0.0553849,-0.0305999,-0.0209718,0.00379369,0.0392625,0.01231,0.00564448,-0.0339193,0.049953,-0.0879741,0.0861276,-0.0272311,-0.00495082,0.120349,0.0504675,0.0210345,0.00969461,-0.000266714,3.36913e-05,-0.0491642,0.0624619,-0.0284633,-0.032734,-0.00239022,0.0327131,-0.105911,-0.0618508,0.0311561,0.118519,-0.0235752,-0.0507017,0.0177751,-0.00151217,-0.035543,0.000562469,-0.0908638,-0.0445906,0.043584,-0.0105139,-0.0472304,-0.132427,0.0174184,-0.0439623,0.0358731,-0.110856,0.0133475,0.0129566,0.0555178,-0.0521159,-0.0492448,-0.0132226,0.0800306,0.137737,-0.0197294,0.0845307,0.0244452,-0.0440953]', '2020-10-01T08:05:00Z' FROM papers WHERE id = 7;
INSERT INTO papers (id, title, abstract, venue_id, year, publication_date, url, in_catalog, metadata_source, fetched_at, created_at) VALUES (8, 'Dialogue State Tracking with Explicit Slot Connection Modeling', 'Recent proposed approaches have made promising progress in dialogue state tracking (DST). However, in multi-domain scenarios, ellipsis and reference are frequently adopted by users to express values that have been mentioned by slots from other domains. To handle these phenomena, we propose a Dialogue State Tracking with Slot Connections (DST-SC) model to explicitly consider slot correlations across different domains. Given a target slot, the slot connecting mechanism in DST-SC can infer its source slot and copy the source slot value directly, thus significantly reducing the difficulty of learning and reasoning. Experimental results verify the benefits of explicit slot connection modeling, and our model achieves state-of-the-art performance on MultiWOZ 2.0 and MultiWOZ 2.1 datasets.', 1, 2020, '2020-07-05', 'https://aclanthology.org/2020.acl-main.5/', true, 'catalog', '2020-10-01T08:00:00Z', '2020-10-01T08:00:00Z');
INSERT INTO paper_ids (scheme, value, paper_id) VALUES ('acl', '2020.acl-main.5', 8);
INSERT INTO authors (id, name, normalized_name) VALUES (21, 'Yawen Ouyang', 'yawen ouyang');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (8, 0, 21);
INSERT INTO authors (id, name, normalized_name) VALUES (22, 'Moxin Chen', 'moxin chen');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (8, 1, 22);
INSERT INTO authors (id, name, normalized_name) VALUES (23, 'Xinyu Dai', 'xinyu dai');
INSERT INTO paper_authors (paper_id, position, author_id) VALUES (8, 2, 23);
INSERT INTO paper_embeddings (paper_id, model, content_hash, embedding, embedded_at) SELECT id, 'all-MiniLM-L6-v2', md5(title || E'\n' || COALESCE(abstract, '')), '[-0.0141555,-0.108239,-0.0296658,-0.00846804,0.011878,0.0137245,0.0372244,-0.0711597,0.069398,-0.0625961,-0.0577548,-0.0319174,-0.0241094,-0.00261152,0.0103084,0.00321996,0.0672071,-0.065125,-0.0135234,-0.0477332,0.0607904,0.00358497,0.0411681,0.00520038,-0.00556097,0.0561401,-0.0795732,0.0327349,-0.0238296,0.0130957,-0.00720779,0.0682978,0.0478579,0.0172959,-0.107587,-0.0311167,0.0220097,0.0472551,-0.0432676,-0.0229326,-0.0512732,0.0517685,0.0588879,0.00112462,0.0661438,-0.0485804,-0.0665315,-0.0259959,-0.0255888,0.0913928,-0.0286819,-0.0386618,0.060623,0.14206,0.0164177,0.0961572,0.0597024,0.128543,-0.0328038,0.0383705,-0.0582234,-0.118825,-0.0339146,0.00541544,-0.0636035,0.076901,-0.0610882,0.0586851,-0.0819061,0.0637233,-0.105618,0.0648732,-0.00499959,-0.0276615,-0.0572037,0.0858587,-0.0437207,-0.0522828,0.0860139,-0.063174,0.0244913,-0.0654126,0.0286948,0.00148506,0.0965931,-0.0132699,-0.0828829,-0.0145914,-0.0543288,0.00451762,-0.0500752,-0.0826474,0.140121,0.0131814,-0.0367027,0.0820241,-0.00706833,0.0281721,-0.0111751,0.00753518,0.00194928,0.0595923,0.0171363,-0.0694485,0.0279855,0.0151217,0.0149858,-0.0129662,0.00760619,-0.0733649,-0.0397961,0.0137974,0.0251453,0.0550581,0.0366211,-0.0363019,0.0439007,-0.0544441,0.0353477,0.0182036,-0.071897,-0.0421134,-0.0339708,0.00555659,-0.00902631,0.0357941,0.0203369,3.02508e-33,0.117279,0.00787589,-0.0480895,0.0116152,-0.00271333,0.047125,-0.0574023,0.0161915,-0.0428008,-0.0122505,0.0293346,-0.075284,-0.0139565,-0.0137918,0.0140101,-0.0426567,-0.0671527,0.0608877,-0.03803,0.0137616,-0.0239588,0.0210769,-0.0427238,0.00923003,0.151603,0.0514209,0.0947282,-0.0117447,-0.0493958,0.00890747,-0.0365257,-0.0430137,-0.00739411,0.0298343,0.0646835,-0.0141937,-0.0165882,-0.00707368,0.0349182,-0.0572015,0.00326928,-0.0450115,-0.0446388,0.0410444,-0.0902355,0.0132423,-0.0465784,0.0266384,0.0165463,0.0261915,-0.0265484,0.0342361,-0.0267221,-0.0179648,0.0037956,-0.127728,0.00903477,0.0691494,0.040764,0.0112991,-0.00343892,0.0210466,-0.0161372,0.029036,0.0223712,0.0692347,-0.0480625,0.0517594,0.0277875,0.0477273,0.0524457,0.0055458,-0.0195101,0.0117644,0.0220028,0.0296387,-0.0608358,-0.0320186,0.0192871,0.050972,0.0093326,-0.0596951,-0.0179122,-0.0215643,0.0158227,-0.0629628,0.0203161,-0.0811315,-0.0504207,0.00339425,0.0681063,-0.00875413,-0.084591,0.0699567,0.0126301,-1.97451e-33,0.00667766,0.110132,0.0364951,0.00806272,-0.0508623,-0.0335235,0.0343753,0.0136875,0.094161,-0.0361575,-0.0257082,0.00790368,0.0561346,0.0202948,0.101261,0.0343723,-0.0640223,-0.0188641,0.0466921,-0.0330204,0.056453,-0.096464,-0.0573668,0.0450276,-0.0599038,-0.0147717,0.0437074,-0.0546099,-0.0466788,-0.018134,-0.0148907,-0.0444338,-0.0645827,0.030916,-0.0451534,0.0109315,0.00880892,0.000655906,-0.00527382,-0.0591171,0.0494029,-0.054246,-0.0636905,0.0163181,-0.00219964,-0.0474026,-0.115248,0.103064,-0.0482365,-0.0141273,-0.139004,0.0104256,-0.00928534,0.0339323,-0.0739677,-0.0235791,-0.0699864,0.0182552,0.0300465,-0.0289212,-0.0108016,-0.0337595,0.0712388,-0.0191544,0.102277,0.0107624,0.066843,-0.0121762,0.000553937,0.0240518,0.0953266,0.0207282,-0.00283872,0.00554453,0.0333607,0.00945195,-0.0107098,-0.0811331,-0.0622638,-0.00112661,-0.041035,0.0640773,0.11869,0.0238863,0.01749,0.0773358,0.0110124,0.10402,-0.0227144,0.0267908,-0.0537174,0.0348393,-0.0250823,0.00695203,-0.0624108,-4.04711e-08,-0.100736,0.00368577,-0.00654387,0.0408007,0.0427334,0.0253322,-0.0367715,0.024942,0.0345545,0.0409393,0.0273537,0.000698495,-0.0672081,-0.0274657,-0.0165779,0.0138448,-0.00143101,-0.00662461,-0.00936217,0.0382325,0.13829,0.0248594,0.0504465,0.129642,-0.00444264,-0.00972747,-0.0808381,0.121976,0.0576022,-0.0204659,0.026839,0.00702496,0.0044653,-0.0384715,0.0497514,0.00397325,-0.0150319,0.0185954,0.0604712,-0.0109024,0.00189969,-0.104593,-0.0780828,0.0381497,0.0652234,0.0182477,-0.0264172,-0.105884,0.0270182,-0.0516676,0.0284937,-0.0404262,0.0285487,0.0556884,0.0165821,-0.0471019,0.0373927,0.0465084,0.109364,0.0636124,-0.0429054,0.0419528,-0.0242246,0.0270708]', '2020-10-01T08:05:00Z' FROM papers WHERE id = 8;

INSERT INTO teams (team_id, name, domain, created_at) VALUES ('T0OLD', 'Old Lab', 'oldlab', '2020-10-01T08:00:00Z');
INSERT INTO channels (team_id, channel_id, name, created_at)
VALUES ('T0OLD', 'C0LAB', 'nlp-lab', '2020-10-01T08:00:00Z');
INSERT INTO channel_members (team_id, channel_id, user_id) VALUES
 ('T0OLD', 'C0LAB', 'U1'), ('T0OLD', 'C0LAB', 'U2'), ('T0OLD', 'C0LAB', 'U3'), ('T0OLD', 'C0LAB', 'U4');
INSERT INTO messages (id, team_id, channel_id, ts, thread_ts, user_id, text, permalink, posted_at, reply_count) VALUES
 (1, 'T0OLD', 'C0LAB', '1604311200.000100', '1604311200.000100', 'U2',
  '<https://aclanthology.org/2020.acl-main.249/|Weight poisoning> scary and well done',
  'https://oldlab.slack.com/archives/C0LAB/p1604311200000100', '2020-11-02T10:00:00Z', 1),
 (2, 'T0OLD', 'C0LAB', '1604314800.000200', '1604311200.000100', 'U3',
  'the RIPPLe regulariser is a neat trick, see <https://aclanthology.org/2020.acl-main.249/>',
  'https://oldlab.slack.com/archives/C0LAB/p1604314800000200', '2020-11-02T11:00:00Z', 0),
 (3, 'T0OLD', 'C0LAB', '1605866400.000300', NULL, 'U3', 'https://doi.org/10.18653/v1/2020.acl-main.432',
  'https://oldlab.slack.com/archives/C0LAB/p1605866400000300', '2020-11-20T10:00:00Z', 0),
 (4, 'T0OLD', 'C0LAB', '1606816800.000400', NULL, 'U2',
  '<https://www.aclweb.org/anthology/2020.acl-main.745.pdf|TaBERT>',
  'https://oldlab.slack.com/archives/C0LAB/p1606816800000400', '2020-12-01T10:00:00Z', 0);
INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url, label) VALUES
 (1, 1, 'T0OLD', 'C0LAB', 'https://aclanthology.org/2020.acl-main.249/', 'Weight poisoning'),
 (2, 1, 'T0OLD', 'C0LAB', 'https://aclanthology.org/2020.acl-main.249/', NULL),
 (3, 2, 'T0OLD', 'C0LAB', 'https://doi.org/10.18653/v1/2020.acl-main.432', NULL),
 (4, 3, 'T0OLD', 'C0LAB', 'https://www.aclweb.org/anthology/2020.acl-main.745.pdf', 'TaBERT');
INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at) VALUES
 (1, 'T0OLD', 'C0LAB', 'U3', '+1', '2020-11-02T10:00:00Z'),
 (1, 'T0OLD', 'C0LAB', 'U4', '+1', '2020-11-02T10:00:00Z'),
 (1, 'T0OLD', 'C0LAB', 'U1', 'eyes', '2020-11-02T10:00:00Z'),
 (3, 'T0OLD', 'C0LAB', 'U2', 'heart', '2020-11-20T10:00:00Z'),
 (4, 'T0OLD', 'C0LAB', 'U4', '-1', '2020-12-01T10:00:00Z');
INSERT INTO emoji_sentiments (team_id, channel_id, emoji, sentiment, updated_at)
VALUES ('T0OLD', 'C0LAB', 'eyes', 'positive', '2020-11-03T08:00:00Z');
INSERT INTO paper_references (citing_paper_id, cited_scheme, cited_value, contexts)
VALUES (4, 'acl', '2020.acl-main.249', ARRAY['Poisoned pre-trained weights can plant backdoors [12].']);
INSERT INTO import_checkpoints (team_id, channel_id, source, cursor, state, started_at, updated_at, completed_at)
VALUES ('T0OLD', 'C0LAB', 'export', NULL, '{"files": 3}', '2020-12-02T08:00:00Z', '2020-12-02T08:01:00Z',
        '2020-12-02T08:01:00Z');

INSERT INTO members (team_id, user_id, display_name, real_name, timezone, updated_at) VALUES
 ('T0OLD', 'U1', 'graham', 'Graham N', 'America/New_York', '2020-10-01T08:00:00Z'),
 ('T0OLD', 'U2', 'ben', 'Ben K', 'Europe/Berlin', '2020-10-01T08:00:00Z'),
 ('T0OLD', 'U3', 'chen', 'Chen L', 'Asia/Shanghai', '2020-10-01T08:00:00Z'),
 ('T0OLD', 'U4', 'dee', NULL, NULL, '2020-10-01T08:00:00Z');
SELECT setval(pg_get_serial_sequence('papers', 'id'), (SELECT max(id) FROM papers));
SELECT setval(pg_get_serial_sequence('messages', 'id'), (SELECT max(id) FROM messages));
SELECT setval(pg_get_serial_sequence('venues', 'id'), (SELECT max(id) FROM venues));
SELECT setval(pg_get_serial_sequence('authors', 'id'), (SELECT max(id) FROM authors));
