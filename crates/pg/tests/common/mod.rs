//! What the PostgreSQL integration tests share.

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

/// The rows `sql` returns with `params`, read on a connection of its own
/// to `url` (outside every index's pool). Panics on any error: a test
/// helper.
pub fn query(url: &str, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Vec<Row> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client.query(sql, params).await.unwrap()
    })
}

/// The one row `sql` returns with `params` (see [`query`]).
pub fn query_one(url: &str, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Row {
    let mut rows = query(url, sql, params);
    assert_eq!(rows.len(), 1, "{sql}");
    rows.remove(0)
}
