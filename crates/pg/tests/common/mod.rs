//! What the PostgreSQL integration tests share.

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

/// The one row `sql` returns with `params`, read on a connection of its
/// own to `url` (outside every index's pool). Panics on any error: a test
/// helper.
pub fn query_one(url: &str, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Row {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client.query_one(sql, params).await.unwrap()
    })
}
